import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsObject, IsOptional, IsString, ValidateIf } from 'class-validator';
import type { ResourceInput } from '@crs/domain/connectors/resource.decider';
import { invalid } from '@crs/domain/errors';
import type { MetadataField } from '@crs/domain/metadata-schema';
import { validateMetadata } from '@crs/domain/metadata-schema';
import { assertCollectionName } from '@crs/domain/names';
import { parseAdditionalMetadata, parseMetadataObject } from '@crs/domain/items/item-input';

/** The longest `resource_id` (characters): ids are a provider's names (`schema.table`, a channel id, a path). */
export const MAX_RESOURCE_ID_CHARACTERS = 512;

/**
 * One resource as the API takes it (POST /connectors/{id}/configure lists them; POST /connectors/{id}/resources takes
 * one). `name` and `resource_type` are sent every time; what the other fields mean when omitted depends on the route
 * (configure keeps instructions and the access rule; a replace clears them).
 */
export class ResourceInputDto {
  @ApiProperty({ description: `The resource's id as discover lists it (a Postgres resource: schema.table); at most ${MAX_RESOURCE_ID_CHARACTERS} characters`, example: 'public.orders' })
  @IsString() resource_id!: string;

  @ApiProperty({ description: 'The resource type as discover lists it (table, view, ...)', example: 'table' })
  @IsString() resource_type!: string;

  @ApiProperty({ description: 'A display name', example: 'Orders' })
  @IsString() name!: string;

  @ApiPropertyOptional({ description: "Collection the resource's documents go to; omitted: the connector's collection" })
  @ValidateIf((o) => o.collection !== undefined) @IsString() collection?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, description: "Schema-declared attributes written on every synced document (checked against the database's metadata schema)" })
  @IsOptional() @IsObject() metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, description: 'Free-form fields written on every synced document (connector_id, resource_id and provider fields win)' })
  @IsOptional() @IsObject() additional_metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true, description: "Provider resource options (GET /connectors/providers?id= lists them); omitted: the provider's defaults" })
  @IsOptional() @IsObject() options?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: [String], nullable: true, description: 'Access rule for every synced document: a list replaces it; [] or null is __private__ (nobody); ["__public__"] reopens' })
  @IsOptional() @IsArray() @IsString({ each: true }) acl?: string[] | null;

  @ApiPropertyOptional({ description: 'Custom ingestion instructions for this resource, at most 4,000 characters; "" clears (back to the connector\'s)' })
  @ValidateIf((o) => o.custom_instructions !== undefined) @IsString() custom_instructions?: string;
}

/** A path's or body's resource id, checked: non-blank, at most MAX_RESOURCE_ID_CHARACTERS. */
export function resourceIdOf(raw: unknown, field = 'resource_id'): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw invalid(`${field} is required and may not be blank`);
  if ([...raw].length > MAX_RESOURCE_ID_CHARACTERS) throw invalid(`${field} is longer than ${MAX_RESOURCE_ID_CHARACTERS} characters`);
  return raw;
}

/** The decider's input from the DTO, with collection, metadata and additional_metadata checked. */
export function resourceInputOf(dto: ResourceInputDto, schema: MetadataField[], field: string): ResourceInput & { resourceId: string } {
  const input: ResourceInput & { resourceId: string } = {
    resourceId: resourceIdOf(dto.resource_id, `${field}.resource_id`),
    resourceType: dto.resource_type,
    name: dto.name,
  };
  if (dto.collection !== undefined) input.collection = assertCollectionName(dto.collection, `${field}.collection`);
  if (dto.metadata != null) input.metadata = validateMetadata(schema, parseMetadataObject(dto.metadata, `${field}.metadata`), `${field}.metadata`);
  if (dto.additional_metadata != null) input.additionalMetadata = parseAdditionalMetadata(dto.additional_metadata, `${field}.additional_metadata`);
  if (dto.options != null) input.options = dto.options;
  if (dto.acl !== undefined) input.acl = dto.acl;
  if (dto.custom_instructions !== undefined) input.customInstructions = dto.custom_instructions;
  return input;
}
