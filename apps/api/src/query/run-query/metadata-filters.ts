import { invalid } from '@crs/domain/errors';
import { isIndexedMetadataKey, METADATA_KEY_RULE } from '@crs/search/metadata-filter-tokens';
import type { Scalar } from '@crs/search/search-index.port';
import type { DatabaseRecord } from '../../databases/database-directory';

/**
 * Bounds of one query's metadata filters: every condition becomes engine work on every search (the filter is pushed
 * down into each call): unbounded, 20,000 conditions took 14 s of CPU in one request, and 50,000 crashed the engine.
 */
export const FILTER_LIMITS = { conditions: 100, valuesPerCondition: 1000 };

/** metadata_filters: schema attributes at the top level, free-form fields under additional_metadata (legacy: document_metadata). */
export function splitFilters(db: DatabaseRecord, filters: Record<string, unknown> | undefined) {
  if (!filters) return {};
  const conditions = Object.entries(filters).reduce(
    (n, [k, v]) => n + (['additional_metadata', 'document_metadata', 'tenant_metadata'].includes(k) && v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).length : 1),
    0,
  );
  if (conditions > FILTER_LIMITS.conditions) throw invalid(`metadata_filters has ${conditions} conditions, more than ${FILTER_LIMITS.conditions}`);
  // Without a prototype: a filter key may be any string, "__proto__" included.
  const metadata: Record<string, Scalar | Scalar[]> = Object.create(null);
  let additionalMetadata: Record<string, Scalar | Scalar[]> | undefined;
  const schema = new Set(db.metadataSchema.map((f) => f.name));
  for (const [key, value] of Object.entries(filters)) {
    if (key === 'additional_metadata' || key === 'document_metadata' || key === 'tenant_metadata') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(`metadata_filters.${key} must be an object`);
      const target = key === 'tenant_metadata' ? metadata : (additionalMetadata ??= Object.create(null) as Record<string, Scalar | Scalar[]>);
      for (const [k, v] of Object.entries(value)) {
        if (key === 'tenant_metadata' && !schema.has(k)) throw invalid(`metadata_filters.tenant_metadata.${k} is not in the database metadata schema`);
        addCondition(target, k, filterValue(v, `metadata_filters.${key}.${k}`), `metadata_filters.${key}`);
      }
      continue;
    }
    if (!schema.has(key)) throw invalid(`metadata_filters.${key} is not in the database metadata schema (free-form fields go under metadata_filters.additional_metadata)`);
    addCondition(metadata, key, filterValue(value, `metadata_filters.${key}`), 'metadata_filters');
  }
  return { metadata: Object.keys(metadata).length ? metadata : undefined, additionalMetadata };
}

/**
 * A condition on a key: a key given twice (a schema attribute at the top level and under tenant_metadata;
 * additional_metadata and its legacy name document_metadata) must satisfy both, so its values are intersected (a
 * chunk holds one value per key; values compare by type). The second never replaces the first.
 */
function addCondition(target: Record<string, Scalar | Scalar[]>, key: string, value: Scalar | Scalar[], where: string): void {
  if (!isIndexedMetadataKey(key)) throw invalid(`${where}: ${JSON.stringify(key.slice(0, 100))} cannot be filtered on (filter keys: ${METADATA_KEY_RULE}; items may hold other keys, stored and returned but not filterable)`);
  if (!Object.prototype.hasOwnProperty.call(target, key)) {
    target[key] = value;
    return;
  }
  const list = (x: Scalar | Scalar[]) => (Array.isArray(x) ? x : [x]);
  const earlier = new Set(list(target[key]).map((x) => JSON.stringify(x)));
  target[key] = list(value).filter((x) => earlier.has(JSON.stringify(x)));
}

function filterValue(v: unknown, field: string): Scalar | Scalar[] {
  const scalar = (x: unknown) => x === null || ['string', 'number', 'boolean'].includes(typeof x);
  if (Array.isArray(v)) {
    if (!v.length || !v.every(scalar)) throw invalid(`${field} must be a value or a non-empty list of values`);
    if (v.length > FILTER_LIMITS.valuesPerCondition) throw invalid(`${field} lists ${v.length} values, more than ${FILTER_LIMITS.valuesPerCondition}`);
    return v as Scalar[];
  }
  if (!scalar(v)) throw invalid(`${field} must be a string, number, boolean, null or a list of them`);
  return v as Scalar;
}
