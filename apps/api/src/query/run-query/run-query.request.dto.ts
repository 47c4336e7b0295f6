import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';

export const MAX_RESULTS_DEFAULT = 10;
export const MAX_RESULTS_LIMIT = 100;

export class QueryRequest {
  @ApiProperty({ description: 'The query text' }) @IsString() @MinLength(1) @Matches(/\S/, { message: 'query must contain something other than white space' }) @MaxLength(10_000) query: string;
  @ApiPropertyOptional() @IsOptional() @IsString() database?: string;
  @ApiPropertyOptional({ deprecated: true }) @IsOptional() @IsString() tenant_id?: string;
  @ApiPropertyOptional({ description: "Collection to search (default: 'default')" }) @IsOptional() @IsString() collection?: string;
  @ApiPropertyOptional({ deprecated: true }) @IsOptional() @IsString() sub_tenant_id?: string;
  @ApiPropertyOptional({ description: 'Search several collections at once (instead of collection)', type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) collections?: string[];
  @ApiPropertyOptional({ deprecated: true, type: [String], description: 'Legacy selector: alias of collections' }) @IsOptional() @IsArray() @IsString({ each: true }) sub_tenant_ids?: string[];
  @ApiPropertyOptional({ enum: ['memory', 'knowledge', 'all'], default: 'all' }) @IsOptional() @IsIn(['memory', 'knowledge', 'all']) type?: 'memory' | 'knowledge' | 'all';
  @ApiPropertyOptional({ enum: ['fast', 'thinking'], default: 'fast' }) @IsOptional() @IsIn(['fast', 'thinking']) mode?: 'fast' | 'thinking';
  @ApiPropertyOptional() @IsOptional() @IsBoolean() query_forceful_relations?: boolean;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() query_apps?: boolean;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Schema attributes (field: value or [values]) and additional_metadata {field: value}' }) @IsOptional() @IsObject() metadata_filters?: Record<string, unknown>;
  @ApiPropertyOptional({ type: [String], description: 'Principals the query runs on behalf of (omitted or ["*"]: no filtering)' }) @IsOptional() @IsArray() acl?: unknown[];
  @ApiPropertyOptional({ type: 'integer', default: MAX_RESULTS_DEFAULT, minimum: 1, maximum: MAX_RESULTS_LIMIT }) @IsOptional() @IsInt() @Min(1) @Max(MAX_RESULTS_LIMIT) max_results?: number;
  @ApiPropertyOptional({ description: 'Keyword/vector balance: 0 keyword only ... 1 vector only, or "auto"', oneOf: [{ type: 'number' }, { type: 'string', enum: ['auto'] }] })
  @IsOptional()
  alpha?: number | 'auto';
  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: 'How much newer content is preferred (0: not at all)' }) @IsOptional() @IsNumber() @Min(0) @Max(1) recency_bias?: number;
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() graph_context?: boolean;
  @ApiPropertyOptional({ description: 'Extra caller context: added to the text the vector search embeds' }) @IsOptional() @IsString() @MaxLength(10_000) additional_context?: string;
  @ApiPropertyOptional({ enum: ['hybrid', 'text'], default: 'hybrid' }) @IsOptional() @IsIn(['hybrid', 'text']) query_by?: 'hybrid' | 'text';
  @ApiPropertyOptional({ enum: ['or', 'and', 'phrase'], description: 'Only with query_by "text"' }) @IsOptional() @IsIn(['or', 'and', 'phrase']) operator?: 'or' | 'and' | 'phrase';
}
