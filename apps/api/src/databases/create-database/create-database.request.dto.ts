import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

export class CreateDatabaseRequest {
  @ApiPropertyOptional({ description: 'Database name: 1-63 of letters, digits, _ and -, starting with a letter or digit' })
  @IsOptional() @IsString() database?: string;

  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of database' })
  @IsOptional() @IsString() tenant_id?: string;

  @ApiPropertyOptional({ description: 'Typed metadata fields: [{name, type: string|integer|float|boolean|json|array, nullable?, max_length?}]', type: 'array', items: { type: 'object' } })
  @IsOptional() @IsArray() metadata_schema?: unknown[];

  @ApiPropertyOptional({ deprecated: true, description: 'Original SDK form of metadata_schema: [{name, data_type: VARCHAR|INT64|FLOAT|BOOL|JSON|ARRAY|...}]', type: 'array', items: { type: 'object' } })
  @IsOptional() @IsArray() tenant_metadata_schema?: unknown[];

  @ApiPropertyOptional({ description: 'Original SDK option; accepted for compatibility, every database stores embeddings' })
  @IsOptional() @IsBoolean() is_embeddings_tenant?: boolean;

  @ApiPropertyOptional({ type: 'integer', description: 'Original SDK option: must equal the configured embedder dimension when given' })
  @IsOptional() @IsInt() @Min(1) @Max(8192) embeddings_dimension?: number;
}
