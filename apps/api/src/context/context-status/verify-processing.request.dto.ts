import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

const idOrIds = { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] };

/** POST /ingestion/verify_processing (legacy): the same fields may come as query parameters; the body's win. */
export class VerifyProcessingRequest {
  @ApiPropertyOptional({ description: 'Database of the items' })
  @IsOptional() @IsString() database?: string;

  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of database' })
  @IsOptional() @IsString() tenant_id?: string;

  @ApiPropertyOptional({ description: 'Only items of this collection' })
  @IsOptional() @IsString() collection?: string;

  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of collection' })
  @IsOptional() @IsString() sub_tenant_id?: string;

  @ApiPropertyOptional({ ...idOrIds, description: 'One source id, taken whole' })
  @IsOptional() @IsString({ each: true }) file_id?: string | string[];

  @ApiPropertyOptional({ ...idOrIds, description: 'One source id, taken whole' })
  @IsOptional() @IsString({ each: true }) id?: string | string[];

  @ApiPropertyOptional({ ...idOrIds, description: 'Source ids: an array, or comma-separated' })
  @IsOptional() @IsString({ each: true }) file_ids?: string | string[];

  @ApiPropertyOptional({ ...idOrIds, description: 'Source ids: an array, or comma-separated' })
  @IsOptional() @IsString({ each: true }) source_ids?: string | string[];

  @ApiPropertyOptional({ ...idOrIds, description: 'Source ids: an array, or comma-separated' })
  @IsOptional() @IsString({ each: true }) ids?: string | string[];
}
