import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsObject, IsString, ValidateIf } from 'class-validator';

/** PATCH /connectors/{id}: only the fields sent change. */
export class UpdateConnectorRequest {
  @ApiPropertyOptional({ type: 'integer', minimum: 60, maximum: 2592000, description: 'Seconds between scheduled syncs' })
  @ValidateIf((o) => o.sync_interval_seconds !== undefined) @IsInt() sync_interval_seconds?: number;

  @ApiPropertyOptional({ description: 'At most 4,000 characters; "" clears; omitted leaves the stored value' })
  @ValidateIf((o) => o.custom_instructions !== undefined) @IsString() custom_instructions?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'New credentials (every field the provider needs): checked with the provider, sealed, and a sync is requested; never returned' })
  @ValidateIf((o) => o.credentials !== undefined) @IsObject() credentials?: Record<string, unknown>;
}
