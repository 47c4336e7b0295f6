import { escapeIdentifier } from 'pg';
import { ConfigurationError } from '../../provider-errors';
import type { ResourceConfig, SyncedDocument } from '../../provider.port';
import { ColumnInfo, defaultUpdateColumn, RelationInfo } from './postgres-catalog';

/**
 * How the rows of one relation become documents: from the resource's `options`, or the defaults.
 *
 * - id: `id_columns`, else the primary key, else the smallest unique index over NOT NULL columns. One column: its
 *   text form; several: a JSON array of their text forms.
 * - title: `title_column`, else a text column named title, name or subject, else "<table> <id>".
 * - body: `body_columns`, else every text-typed column (typcategory S) that is not part of the id; if there is none,
 *   every other column. One column gives its value; several give "column: value" lines, NULLs left out.
 * - filterable fields: `schema`, `table`, and each of `filterable_columns` under its own name (JSON scalars; arrays
 *   and objects as JSON text).
 * - update column: `updated_at_column` (null: none), else a date/time column named updated_at, modified_at,
 *   last_modified, last_updated, updated, modified or update_time.
 */
export interface RowMapping {
  relation: RelationInfo;
  idColumns: ColumnInfo[];
  titleColumn: ColumnInfo | undefined;
  bodyColumns: ColumnInfo[];
  filterableColumns: ColumnInfo[];
  updateColumn: ColumnInfo | undefined;
  pageSize: number;
}

export const RESOURCE_OPTIONS = [
  { name: 'id_columns', description: 'Columns that identify a row (default: the primary key).' },
  { name: 'title_column', description: "Column that makes a document's title (default: a text column named title, name or subject; else \"<table> <id>\")." },
  { name: 'body_columns', description: 'Columns that make the content (default: every text column outside the id).' },
  { name: 'filterable_columns', description: 'Columns copied into additional_metadata under their own names, for metadata filters.' },
  { name: 'updated_at_column', description: 'Column whose value grows when a row changes, for incremental syncs (default: a date/time column named updated_at or similar; null: none).' },
  { name: 'page_size', description: 'Rows read per query, and between checkpoints (default 1000).' },
];

const RESERVED_FIELDS = new Set(['schema', 'table']);

function stringList(value: unknown, option: string, resourceId: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) return value as string[];
  throw new ConfigurationError(`Resource ${resourceId}: ${option} must be a column name or a non-empty list of column names.`);
}

export function resolveMapping(relation: RelationInfo, resource: ResourceConfig, defaultPageSize: number): RowMapping {
  const options = resource.options ?? {};
  const known = new Set(RESOURCE_OPTIONS.map((o) => o.name));
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new ConfigurationError(`Resource ${resource.resourceId}: unknown option ${key}; the database provider reads ${[...known].join(', ')}.`);
  }
  const byName = new Map(relation.columns.map((c) => [c.name, c]));
  const column = (name: string, option: string) => {
    const c = byName.get(name);
    if (!c) throw new ConfigurationError(`Resource ${resource.resourceId}: ${option} names column "${name}", which ${relation.resourceId} does not have (it has ${relation.columns.map((x) => x.name).join(', ')}).`);
    return c;
  };

  const idNames = stringList(options.id_columns, 'id_columns', resource.resourceId) ?? relation.key;
  if (idNames.length === 0) {
    throw new ConfigurationError(`${relation.resourceId} has no primary key (nor a unique index over NOT NULL columns): set id_columns to the columns that identify a row.`);
  }
  const idColumns = idNames.map((n) => column(n, 'id_columns'));

  let titleColumn: ColumnInfo | undefined;
  if (options.title_column !== undefined) {
    if (typeof options.title_column !== 'string') throw new ConfigurationError(`Resource ${resource.resourceId}: title_column must be a column name.`);
    titleColumn = column(options.title_column, 'title_column');
  } else {
    titleColumn = ['title', 'name', 'subject'].map((n) => byName.get(n)).find((c) => c?.category === 'S');
  }

  const idSet = new Set(idNames);
  const bodyNames = stringList(options.body_columns, 'body_columns', resource.resourceId);
  let bodyColumns: ColumnInfo[];
  if (bodyNames) bodyColumns = bodyNames.map((n) => column(n, 'body_columns'));
  else {
    bodyColumns = relation.columns.filter((c) => c.category === 'S' && !idSet.has(c.name));
    if (bodyColumns.length === 0) bodyColumns = relation.columns.filter((c) => !idSet.has(c.name));
    if (bodyColumns.length === 0) bodyColumns = idColumns;
  }

  const filterNames = stringList(options.filterable_columns, 'filterable_columns', resource.resourceId) ?? [];
  for (const n of filterNames) {
    if (RESERVED_FIELDS.has(n)) throw new ConfigurationError(`Resource ${resource.resourceId}: filterable column "${n}" would collide with the provider's own ${n} field.`);
  }
  const filterableColumns = filterNames.map((n) => column(n, 'filterable_columns'));

  let updateColumn: ColumnInfo | undefined;
  if (options.updated_at_column === null) updateColumn = undefined;
  else if (options.updated_at_column !== undefined) {
    if (typeof options.updated_at_column !== 'string') throw new ConfigurationError(`Resource ${resource.resourceId}: updated_at_column must be a column name or null.`);
    updateColumn = column(options.updated_at_column, 'updated_at_column');
    if (!['D', 'N', 'S'].includes(updateColumn.category)) {
      throw new ConfigurationError(`Resource ${resource.resourceId}: updated_at_column "${updateColumn.name}" is of type ${updateColumn.type}; it must be a date, time, number or text that grows when a row changes.`);
    }
  } else updateColumn = defaultUpdateColumn(relation.columns);

  let pageSize = defaultPageSize;
  if (options.page_size !== undefined) {
    if (typeof options.page_size !== 'number' || !Number.isInteger(options.page_size) || options.page_size < 1 || options.page_size > 100_000) {
      throw new ConfigurationError(`Resource ${resource.resourceId}: page_size must be a whole number from 1 to 100000.`);
    }
    pageSize = options.page_size;
  }
  return { relation, idColumns, titleColumn, bodyColumns, filterableColumns, updateColumn, pageSize };
}

const q = escapeIdentifier;
/** A column of the relation, aliased `t` in every query. */
export const columnSql = (c: ColumnInfo) => `t.${q(c.name)}`;
const col = columnSql;

export function relationSql(m: RowMapping): string {
  return `${q(m.relation.schema)}.${q(m.relation.name)}`;
}

/** The columns whose values make a document; the content hash covers exactly these, in this order. */
function contentColumns(m: RowMapping): ColumnInfo[] {
  const seen = new Set<string>();
  const out: ColumnInfo[] = [];
  for (const c of [...m.idColumns, ...(m.titleColumn ? [m.titleColumn] : []), ...m.bodyColumns, ...m.filterableColumns]) {
    if (!seen.has(c.name)) out.push(c);
    seen.add(c.name);
  }
  return out;
}

/**
 * The content hash, computed by the database: md5 of the row value built from the content columns, in the session's
 * fixed text formats. The same expression serves the sync and the id listing, so both report the same hash for the
 * same content. The update column is left out: touching it alone changes no document.
 */
export function hashSql(m: RowMapping): string {
  return `md5(ROW(${contentColumns(m).map(col).join(', ')})::text)`;
}

export function idSelectSql(m: RowMapping): string {
  return m.idColumns.map((c, i) => `${col(c)}::text AS "__id${i}"`).join(', ');
}

export function idNotNullSql(m: RowMapping): string {
  return m.idColumns.map((c) => `${col(c)} IS NOT NULL`).join(' AND ');
}

export function idOrderSql(m: RowMapping): string {
  return m.idColumns.map(col).join(', ');
}

/** `(t.a, t.b)` and `($n::type_a, $n+1::type_b)`, for keyset comparisons that use the columns' own order. */
export function keyTuple(columns: ColumnInfo[], firstParam: number): { columns: string; params: string } {
  return {
    columns: `(${columns.map(col).join(', ')})`,
    params: `(${columns.map((c, i) => `$${firstParam + i}::${c.type}`).join(', ')})`,
  };
}

/** Everything a document is built from, one row per document. */
export function documentSelectSql(m: RowMapping): string {
  const parts = [idSelectSql(m), `${hashSql(m)} AS "__hash"`];
  if (m.titleColumn) parts.push(`${col(m.titleColumn)}::text AS "__title"`);
  m.bodyColumns.forEach((c, i) => parts.push(`${col(c)}::text AS "__b${i}"`));
  m.filterableColumns.forEach((c, i) => parts.push(`to_jsonb(${col(c)}) AS "__f${i}"`));
  if (m.updateColumn) {
    parts.push(`${col(m.updateColumn)}::text AS "__u"`);
    if (m.updateColumn.category === 'D') parts.push(`to_jsonb(${col(m.updateColumn)}) #>> '{}' AS "__updated"`);
  }
  return parts.join(', ');
}

export type DocumentRow = Record<string, unknown>;

export function idParts(m: RowMapping, row: DocumentRow): string[] {
  return m.idColumns.map((_, i) => row[`__id${i}`] as string);
}

export function documentId(parts: string[]): string {
  return parts.length === 1 ? parts[0] : JSON.stringify(parts);
}

/** The id's parts back from a document id; undefined when the id cannot be one this mapping made. */
export function parseDocumentId(m: RowMapping, id: string): string[] | undefined {
  if (m.idColumns.length === 1) return [id];
  try {
    const parts = JSON.parse(id);
    if (Array.isArray(parts) && parts.length === m.idColumns.length && parts.every((p) => typeof p === 'string')) return parts;
  } catch {
    // not a composite id
  }
  return undefined;
}

function scalar(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
}

export function rowToDocument(m: RowMapping, row: DocumentRow): SyncedDocument {
  const parts = idParts(m, row);
  const id = documentId(parts);
  const title = (m.titleColumn ? (row.__title as string | null) : null) ?? `${m.relation.name} ${id}`;
  let text: string;
  if (m.bodyColumns.length === 1) text = (row.__b0 as string | null) ?? '';
  else {
    text = m.bodyColumns
      .map((c, i) => [c.name, row[`__b${i}`] as string | null] as const)
      .filter(([, v]) => v !== null)
      .map(([name, v]) => `${name}: ${v}`)
      .join('\n');
  }
  const filterableFields: SyncedDocument['filterableFields'] = { schema: m.relation.schema, table: m.relation.name };
  m.filterableColumns.forEach((c, i) => (filterableFields[c.name] = scalar(row[`__f${i}`])));
  return {
    id,
    title,
    content: { kind: 'text', text },
    updatedAt: (row.__updated as string | null | undefined) ?? null,
    contentHash: row.__hash as string,
    metadata: { schema: m.relation.schema, table: m.relation.name, key: Object.fromEntries(m.idColumns.map((c, i) => [c.name, parts[i]])) },
    filterableFields,
  };
}
