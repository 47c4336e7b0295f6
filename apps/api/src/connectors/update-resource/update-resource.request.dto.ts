import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsOptional, IsString, ValidateIf } from 'class-validator';

/** PATCH /connectors/{id}/resources/{resource_id}: only the fields sent change. */
export class UpdateResourceRequest {
  @ApiPropertyOptional({ description: 'At most 4,000 characters; "" clears (back to the connector\'s); omitted leaves the stored value' })
  @ValidateIf((o) => o.custom_instructions !== undefined) @IsString() custom_instructions?: string;

  @ApiPropertyOptional({ type: [String], nullable: true, description: 'A list replaces the access rule (applies to already-synced documents on the next query); [] or null is __private__ (nobody); ["__public__"] reopens' })
  @IsOptional() @IsArray() @IsString({ each: true }) acl?: string[] | null;
}
