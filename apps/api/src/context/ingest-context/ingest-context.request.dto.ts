import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsBoolean, IsIn, IsOptional, IsString } from 'class-validator';

/**
 * POST /context/ingest and POST /ingestion/upload_knowledge (multipart/form-data): the text fields, checked after the
 * parts are read (a field sent twice is refused before). Nested values are JSON-encoded strings; files come in
 * `documents` parts.
 */
export class IngestContextRequest {
  @ApiPropertyOptional({ enum: ['memory', 'knowledge'], description: 'Omitted: memory when `memories` is sent, knowledge otherwise' })
  @IsOptional() @IsIn(['memory', 'knowledge'], { message: "type must be 'memory' or 'knowledge'" })
  type?: string;

  @ApiPropertyOptional() @IsOptional() @IsString() database?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of database' }) @IsOptional() @IsString() tenant_id?: string;
  @ApiPropertyOptional({ description: 'Default collection when omitted' }) @IsOptional() @IsString() collection?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of collection' }) @IsOptional() @IsString() sub_tenant_id?: string;

  @ApiPropertyOptional({ description: "true (default) replaces an item with the same id; false fails that item with ITEM_EXISTS ('true'/'false'/'1'/'0')" })
  @IsOptional() @IsString() upsert?: string;

  @ApiPropertyOptional({ description: 'type=memory: a JSON-encoded array of memory items' })
  @IsOptional() @IsString() memories?: string;

  @ApiPropertyOptional({ description: 'type=knowledge: a JSON-encoded app item or array of app items' })
  @IsOptional() @IsString() app_knowledge?: string;

  @ApiPropertyOptional({ description: 'JSON-encoded array of per-file entries {id, title, metadata, additional_metadata, acl, relations}, in the order of the files' })
  @IsOptional() @IsString() document_metadata?: string;

  @ApiPropertyOptional({ description: 'JSON-encoded array aligned with the files, or an object keyed by filename' })
  @IsOptional() @IsString() file_metadata?: string;

  @ApiPropertyOptional({ type: 'array', items: { type: 'string', format: 'binary' }, description: 'The files (parts named documents)' })
  @Allow() documents?: unknown;
}

/** POST /memories/add_memory (JSON): memories as an array (or a JSON-encoded array). */
export class AddMemoryRequest {
  @ApiPropertyOptional() @IsOptional() @IsString() database?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of database' }) @IsOptional() @IsString() tenant_id?: string;
  @ApiPropertyOptional({ description: 'Default collection when omitted' }) @IsOptional() @IsString() collection?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of collection' }) @IsOptional() @IsString() sub_tenant_id?: string;
  @ApiPropertyOptional({ description: 'Default true' }) @IsOptional() @IsBoolean({ message: 'upsert must be a boolean' }) upsert?: boolean;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, description: 'Memory items' }) @Allow() memories?: unknown;
}
