import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsObject, IsOptional, IsString, ValidateIf } from 'class-validator';

/** POST /connectors. */
export class CreateConnectorRequest {
  @ApiProperty({ description: 'A provider id (GET /connectors/providers)', example: 'postgres' })
  @IsString() provider!: string;

  @ApiPropertyOptional({ description: 'The database synced documents go to (required, under this name or tenant_id)' })
  @IsOptional() @IsString() database?: string;

  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of database' })
  @IsOptional() @IsString() tenant_id?: string;

  @ApiPropertyOptional({ description: 'Default collection when omitted' })
  @IsOptional() @IsString() collection?: string;

  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of collection' })
  @IsOptional() @IsString() sub_tenant_id?: string;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: "The provider's credential fields (GET /connectors/providers?id=); sealed at rest, never returned", example: { connection_string: 'postgres://reader:secret@db.example.com:5432/shop' } })
  @IsObject() credentials!: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'Custom ingestion instructions for every synced document, at most 4,000 characters; "" or omitted: none' })
  @ValidateIf((o) => o.custom_instructions !== undefined) @IsString() custom_instructions?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 60, maximum: 2592000, default: 3600, description: 'Seconds between scheduled syncs' })
  @ValidateIf((o) => o.sync_interval_seconds !== undefined) @IsInt() sync_interval_seconds?: number;

  @ApiPropertyOptional({ description: "The external account's identifier, part of every synced document's deduplication key; default: the account the credentials identify (a database provider: host:port/database)" })
  @ValidateIf((o) => o.provider_account_scope !== undefined) @IsString() provider_account_scope?: string;

  @ApiPropertyOptional({
    default: true,
    description:
      "Capture the source's own permissions on every sync (rule 11; providers that capture none ignore it). false: the resources' acl rules alone decide who sees synced documents. Set at creation only: to change it, create another connector.",
  })
  @ValidateIf((o) => o.capture_permissions !== undefined) @IsBoolean() capture_permissions?: boolean;
}
