import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsIn, IsOptional, IsString } from 'class-validator';

const TYPE = "type must be 'memory' or 'knowledge'";

/** What selects the item (PATCH /context/{id}/metadata): in the query string or in the body; the two must agree. */
export class ItemSelectorQuery {
  @ApiPropertyOptional() @IsOptional() @IsString() database?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of database' }) @IsOptional() @IsString() tenant_id?: string;
  @ApiPropertyOptional({ description: 'Default collection when omitted' }) @IsOptional() @IsString() collection?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of collection' }) @IsOptional() @IsString() sub_tenant_id?: string;
  @ApiPropertyOptional({ enum: ['memory', 'knowledge'], description: 'Needed only when both stores hold an item with the id' })
  @IsOptional() @IsIn(['memory', 'knowledge'], { message: TYPE }) type?: 'memory' | 'knowledge';
}

/** The edit: only the fields sent change. */
export class UpdateMetadataRequest extends ItemSelectorQuery {
  @ApiPropertyOptional({ oneOf: [{ type: 'object', additionalProperties: true }, { type: 'string' }], description: "Schema fields (an object, or the original SDK's JSON string), merged into the stored ones and checked against the database's schema" })
  @Allow() metadata?: unknown;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Free-form fields, merged into the stored ones' })
  @Allow() additional_metadata?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'New title; null clears it' })
  @IsOptional() @IsString({ message: 'title must be a string' }) title?: string | null;

  @ApiPropertyOptional({ type: [String], nullable: true, description: 'A list replaces the stored ACL exactly; [] or null revokes every grant' })
  @Allow() acl?: unknown;
}
