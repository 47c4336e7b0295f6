import { characterLength } from './text-length';
import { invalid } from './errors';

/**
 * A database's metadata schema: typed fields that memory/document `metadata` must fit and that
 * queries can filter on. Accepts our names and the original SDK's `data_type` names.
 */
export type MetadataFieldType = 'string' | 'integer' | 'float' | 'boolean' | 'json' | 'array';

export interface MetadataField {
  name: string;
  type: MetadataFieldType;
  nullable: boolean;
  max_length?: number;
}

const TYPE_ALIASES: Record<string, MetadataFieldType> = {
  string: 'string', str: 'string', text: 'string', varchar: 'string', keyword: 'string',
  integer: 'integer', int: 'integer', int8: 'integer', int16: 'integer', int32: 'integer', int64: 'integer', long: 'integer',
  float: 'float', double: 'float', number: 'float',
  boolean: 'boolean', bool: 'boolean',
  json: 'json', object: 'json',
  array: 'array', list: 'array',
};

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const MAX_SCHEMA_FIELDS = 64;
const RESERVED = new Set(['id', 'database', 'collection', 'tenant_id', 'sub_tenant_id', 'acl', 'additional_metadata', 'connector_id', 'provider']);

export function normalizeMetadataSchema(raw: unknown, field = 'metadata_schema'): MetadataField[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalid(`${field} must be an array of {name, type}`);
  if (raw.length > MAX_SCHEMA_FIELDS) throw invalid(`${field} may declare at most ${MAX_SCHEMA_FIELDS} fields`);
  const seen = new Set<string>();
  return raw.map((f, i) => {
    if (typeof f !== 'object' || f === null || Array.isArray(f)) throw invalid(`${field}[${i}] must be an object`);
    const entry = f as Record<string, unknown>;
    const name = entry.name;
    if (typeof name !== 'string' || !FIELD_NAME.test(name)) throw invalid(`${field}[${i}].name must be an identifier (letters, digits, '_', at most 64 characters)`);
    if (RESERVED.has(name)) throw invalid(`${field}[${i}].name '${name}' is reserved`);
    if (seen.has(name)) throw invalid(`${field}[${i}].name '${name}' is declared twice`);
    seen.add(name);
    if (entry.type != null && entry.data_type != null) {
      const [a, b] = [entry.type, entry.data_type].map((x) => (typeof x === 'string' ? TYPE_ALIASES[x.toLowerCase()] : undefined));
      if (!a || a !== b) throw invalid(`${field}[${i}] gives type '${String(entry.type)}' and data_type '${String(entry.data_type)}', which disagree: send one`);
    }
    const rawType = entry.type ?? entry.data_type ?? 'string';
    const type = typeof rawType === 'string' ? TYPE_ALIASES[rawType.toLowerCase()] : undefined;
    if (!type) throw invalid(`${field}[${i}].type '${String(rawType)}' is not one of string, integer, float, boolean, json, array (or VARCHAR, INT8..INT64, FLOAT, DOUBLE, BOOL, JSON, ARRAY)`);
    const maxLength = entry.max_length;
    if (maxLength !== undefined && maxLength !== null && (!Number.isInteger(maxLength) || (maxLength as number) < 1 || (maxLength as number) > 65535)) {
      throw invalid(`${field}[${i}].max_length must be an integer from 1 to 65535`);
    }
    const nullable = entry.nullable === undefined ? true : entry.nullable;
    if (typeof nullable !== 'boolean') throw invalid(`${field}[${i}].nullable must be a boolean`);
    const out: MetadataField = { name, type, nullable };
    if (typeof maxLength === 'number') out.max_length = maxLength;
    return out;
  });
}

/** Checks a metadata object against the schema; unknown keys and wrong types are errors. */
export function validateMetadata(schema: MetadataField[], metadata: Record<string, unknown>, field = 'metadata'): Record<string, unknown> {
  const byName = new Map(schema.map((f) => [f.name, f]));
  for (const [key, value] of Object.entries(metadata)) {
    const def = byName.get(key);
    if (!def) {
      const known = schema.length ? schema.map((f) => f.name).join(', ') : 'none (the database has no metadata schema)';
      throw invalid(`${field}.${key} is not declared in the database metadata schema; declared fields: ${known}`);
    }
    if (value === null) {
      if (!def.nullable) throw invalid(`${field}.${key} may not be null`);
      continue;
    }
    const ok =
      (def.type === 'string' && typeof value === 'string' && (def.max_length === undefined || characterLength(value) <= def.max_length)) ||
      // Integers JSON numbers carry exactly (|n| <= 2^53 - 1): a larger one was already rounded by JSON.parse, so it is
      // refused rather than stored as another number.
      (def.type === 'integer' && Number.isSafeInteger(value)) ||
      (def.type === 'float' && typeof value === 'number' && Number.isFinite(value)) ||
      (def.type === 'boolean' && typeof value === 'boolean') ||
      (def.type === 'array' && Array.isArray(value)) ||
      def.type === 'json';
    if (!ok) throw invalid(`${field}.${key} must be of type ${def.type}${def.max_length ? ` (at most ${def.max_length} characters)` : ''}${def.type === 'integer' ? ' (at most 9007199254740991 in magnitude, what JSON numbers hold exactly)' : ''}`);
  }
  return metadata;
}
