import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Max, Min, ValidateIf, type ValidationArguments } from 'class-validator';

export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 100;
export const PAGE_MAX = 1_000_000;
export const LIST_IDS_MAX = 100;
/** Fields a client may ask to see in the list entries (the original SDK's names; `content` adds the text). */
export const INCLUDE_FIELDS = ['attachments', 'content', 'description', 'document_metadata', 'note', 'relations', 'tenant_metadata', 'timestamp', 'title', 'type', 'url'];

const pageMessage = `page must be an integer from 1 to ${PAGE_MAX}`;
const pageSizeMessage = `page_size must be an integer from 1 to ${PAGE_SIZE_MAX}`;
const idsMessage = `ids must be an array of at most ${LIST_IDS_MAX} ids`;
const aclMessage = 'acl must be an array of strings';
const includeArrayMessage = 'include_fields must be an array';
const includeMessage = ({ value }: ValidationArguments) => {
  if (!Array.isArray(value)) return includeArrayMessage;
  const bad = value.find((f) => typeof f !== 'string' || !INCLUDE_FIELDS.includes(f));
  return `include_fields: '${String(bad)}' is not one of ${INCLUDE_FIELDS.join(', ')}`;
};

/** Optional, but not null: a null list or filter is refused (null type, page, page_size or acl mean their default). */
const IfSent = () => ValidateIf((_, value) => value !== undefined);

/** POST /context/list. */
export class ListContextRequest {
  @ApiPropertyOptional({ description: 'Database to list' })
  @IsOptional() @IsString() database?: string;

  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of database' })
  @IsOptional() @IsString() tenant_id?: string;

  @ApiPropertyOptional({ description: "Collection to list (default: 'default')" })
  @IsOptional() @IsString() collection?: string;

  @ApiPropertyOptional({ deprecated: true, description: 'Deprecated alias of collection' })
  @IsOptional() @IsString() sub_tenant_id?: string;

  @ApiPropertyOptional({ enum: ['knowledge', 'memory'], default: 'knowledge', description: 'Store to list' })
  @IsOptional() @IsIn(['memory', 'knowledge'], { message: "type must be 'memory' or 'knowledge'" }) type?: 'memory' | 'knowledge';

  @ApiPropertyOptional({ type: [String], maxItems: LIST_IDS_MAX, description: 'Only these item ids' })
  @IfSent() @IsArray({ message: idsMessage }) @ArrayMaxSize(LIST_IDS_MAX, { message: idsMessage }) @IsString({ each: true, message: idsMessage }) ids?: string[];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: PAGE_MAX, default: 1, description: 'Page number, 1-based' })
  @IsOptional() @IsInt({ message: pageMessage }) @Min(1, { message: pageMessage }) @Max(PAGE_MAX, { message: pageMessage }) page?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: PAGE_SIZE_MAX, default: PAGE_SIZE_DEFAULT, description: 'Items per page' })
  @IsOptional() @IsInt({ message: pageSizeMessage }) @Min(1, { message: pageSizeMessage }) @Max(PAGE_SIZE_MAX, { message: pageSizeMessage }) page_size?: number;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'tenant_metadata {field: value} and additional_metadata {field: value}: items whose metadata contains these values; source_fields {title|type|url|description: value}: items whose field equals the value',
  })
  @IfSent() @IsObject() filters?: Record<string, unknown>;

  @ApiPropertyOptional({ type: [String], enum: INCLUDE_FIELDS, description: "Fields to include; 'content' adds each source's text" })
  @IfSent() @IsArray({ message: includeArrayMessage }) @IsIn(INCLUDE_FIELDS, { each: true, message: includeMessage }) include_fields?: string[];

  @ApiPropertyOptional({ type: [String], description: 'Principals the list runs on behalf of, same meaning as in /query (omitted or ["*"]: no filtering)' })
  @IsOptional() @IsArray({ message: aclMessage }) @IsString({ each: true, message: aclMessage }) acl?: string[];
}
