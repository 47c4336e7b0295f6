import { ACL_COLUMN, EXPIRY_COLUMN, UNRESTRICTED } from './lancedb-chunk-table';
import { filterTokenGroups } from './metadata-filter-tokens';
import { PUBLIC_PRINCIPAL, type SearchFilter, SearchIndexError } from './search-index.port';

/**
 * SQL predicates for LanceDB (DataFusion dialect). Every string is a single-quoted literal with
 * quotes doubled (backslash is not an escape character in this dialect); numbers must be safe integers.
 */

export function sqlString(value: string): string {
  if (typeof value !== 'string') throw new SearchIndexError('invalid_argument', `expected a string, got ${typeof value}`);
  return `'${value.replace(/'/g, "''")}'`;
}

export function sqlInteger(value: number, what: string): string {
  if (!Number.isFinite(value)) throw new SearchIndexError('invalid_argument', `${what} must be a finite number`);
  const n = Math.floor(value);
  if (!Number.isSafeInteger(n)) throw new SearchIndexError('invalid_argument', `${what} is out of range`);
  return String(n);
}

/** `column IN (...)`, or `false` for an empty list (SQL has no empty IN list). */
export function sqlIn(column: string, values: readonly string[]): string {
  if (values.length === 0) return 'false';
  return `${column} IN (${values.map(sqlString).join(', ')})`;
}

function sqlArrayHasAny(column: string, values: readonly string[]): string {
  if (values.length === 0) return 'false';
  return `array_has_any(${column}, [${values.map(sqlString).join(', ')}])`;
}

/** The `where` of a filter, or undefined when it constrains nothing. */
export function lanceWhere(filter: SearchFilter | undefined): string | undefined {
  if (!filter) return undefined;
  const clauses: string[] = [];
  if (filter.stores) clauses.push(sqlIn('store', filter.stores));
  if (filter.collections) clauses.push(sqlIn('collection', filter.collections));
  if (filter.itemIds) clauses.push(sqlIn('item_id', filter.itemIds));
  // Chunks that never expire carry NEVER_EXPIRES in the expiry key: one indexable range.
  if (filter.now !== undefined) clauses.push(`${EXPIRY_COLUMN} > ${sqlInteger(filter.now, 'filter.now')}`);
  if (filter.includeApps === false) clauses.push('is_app = false');
  if (filter.principalsAny) {
    // Unrestricted chunks carry UNRESTRICTED in the ACL column: one array_has_any, answered by its label-list index.
    clauses.push(sqlArrayHasAny(ACL_COLUMN, [UNRESTRICTED, PUBLIC_PRINCIPAL, ...filter.principalsAny]));
  }
  for (const group of [...filterTokenGroups('m', filter.metadata), ...filterTokenGroups('a', filter.additionalMetadata)]) {
    clauses.push(sqlArrayHasAny('filter_kv', group));
  }
  if (clauses.length === 0) return undefined;
  return clauses.map((c) => `(${c})`).join(' AND ');
}
