import { ConfigurationError, isProviderError, ResourceGoneError } from '../../provider-errors';
import type { DiscoveredResource } from '../../provider.port';
import type { ReconnectingSession } from './postgres-session';

export interface ColumnInfo {
  name: string;
  /** `format_type` of the column: a type name Postgres parses back, used to cast cursor and id values. */
  type: string;
  /** pg_type.typcategory: 'S' string, 'D' date/time, 'N' numeric, 'B' boolean, ... */
  category: string;
  notNull: boolean;
}

export interface RelationInfo {
  schema: string;
  name: string;
  /** `schema.table` with each part quoted only where Postgres needs it (`format('%I.%I')`) */
  resourceId: string;
  resourceType: 'table' | 'view' | 'materialized_view';
  columns: ColumnInfo[];
  /** The primary key, or else the smallest unique index over NOT NULL columns; empty when there is neither. */
  key: string[];
}

/** Relations a connector may list: tables (partitioned ones as one), views, materialized views; no system schemas. */
const RELKINDS: Record<string, RelationInfo['resourceType']> = { r: 'table', p: 'table', v: 'view', m: 'materialized_view' };

/** Column names taken as the update column when a resource sets none, if their type is a date or time. */
export const UPDATE_COLUMN_NAMES = ['updated_at', 'modified_at', 'last_modified', 'last_updated', 'updated', 'modified', 'update_time'];

const RELATIONS_SQL = `
  SELECT c.oid::bigint AS oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind,
         format('%I.%I', n.nspname, c.relname) AS resource_id, greatest(c.reltuples, -1)::bigint AS estimate
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind IN ('r', 'p', 'v', 'm') AND NOT c.relispartition
     AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
     AND has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')`;

const COLUMNS_SQL = `
  SELECT a.attrelid::bigint AS oid, a.attname::text AS name, format_type(a.atttypid, a.atttypmod) AS type,
         t.typcategory::text AS category, a.attnotnull AS not_null
    FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
   WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
   ORDER BY a.attrelid, a.attnum`;

const KEYS_SQL = `
  SELECT DISTINCT ON (i.indrelid) i.indrelid::bigint AS oid,
         array(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns
    FROM pg_index i
   WHERE i.indrelid = ANY($1::oid[]) AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL
     AND (i.indisprimary OR NOT EXISTS (SELECT 1 FROM unnest(i.indkey) k(attnum)
                                          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                                         WHERE NOT a.attnotnull))
   ORDER BY i.indrelid, i.indisprimary DESC, i.indnatts, i.indexrelid`;

interface RelationRow {
  oid: string;
  schema: string;
  name: string;
  kind: string;
  resource_id: string;
  estimate: string;
}

async function describe(session: ReconnectingSession, relations: RelationRow[]): Promise<Map<string, { columns: ColumnInfo[]; key: string[] }>> {
  const oids = relations.map((r) => r.oid);
  const out = new Map(oids.map((oid) => [oid, { columns: [] as ColumnInfo[], key: [] as string[] }]));
  if (oids.length === 0) return out;
  const columns = await session.query<{ oid: string; name: string; type: string; category: string; not_null: boolean }>(COLUMNS_SQL, [oids]);
  for (const c of columns) out.get(c.oid)?.columns.push({ name: c.name, type: c.type, category: c.category, notNull: c.not_null });
  const keys = await session.query<{ oid: string; columns: string[] }>(KEYS_SQL, [oids]);
  for (const k of keys) {
    const entry = out.get(k.oid);
    if (entry) entry.key = k.columns;
  }
  return out;
}

function relationInfo(row: RelationRow, described: { columns: ColumnInfo[]; key: string[] }): RelationInfo {
  return { schema: row.schema, name: row.name, resourceId: row.resource_id, resourceType: RELKINDS[row.kind], columns: described.columns, key: described.key };
}

export function defaultUpdateColumn(columns: ColumnInfo[]): ColumnInfo | undefined {
  for (const name of UPDATE_COLUMN_NAMES) {
    const c = columns.find((col) => col.name === name && col.category === 'D');
    if (c) return c;
  }
  return undefined;
}

export async function discoverRelations(session: ReconnectingSession): Promise<DiscoveredResource[]> {
  const rows = await session.query<RelationRow>(`${RELATIONS_SQL} ORDER BY 2, 3`);
  const described = await describe(session, rows);
  return rows.map((row) => {
    const info = relationInfo(row, described.get(row.oid)!);
    return {
      resourceId: info.resourceId,
      resourceType: info.resourceType,
      name: info.resourceId,
      details: {
        schema: info.schema,
        table: info.name,
        columns: info.columns.map((c) => ({ name: c.name, type: c.type })),
        key: info.key,
        update_column: defaultUpdateColumn(info.columns)?.name ?? null,
        text_columns: info.columns.filter((c) => c.category === 'S').map((c) => c.name),
        estimated_rows: Number(row.estimate) >= 0 ? Number(row.estimate) : null,
      },
    };
  });
}

/** The relation a `resource_id` names (`schema.table`, parsed as Postgres parses a qualified name). */
export async function resolveRelation(session: ReconnectingSession, resourceId: string): Promise<RelationInfo> {
  let parts: string[];
  try {
    const [row] = await session.query<{ parts: string[] }>('SELECT parse_ident($1)::text[] AS parts', [resourceId], resourceId);
    parts = row.parts;
  } catch (err) {
    // Refused credentials, a lost connection or a missing grant are what they are, not a malformed name.
    if (isProviderError(err) && err.kind !== 'configuration') throw err;
    throw new ConfigurationError(`The resource_id "${resourceId}" is not a schema-qualified name such as public.orders.`, { cause: err });
  }
  if (parts.length !== 2) throw new ConfigurationError(`The resource_id "${resourceId}" must name a schema and a table or view, as in public.orders.`);
  const rows = await session.query<RelationRow>(
    `SELECT c.oid::bigint AS oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind,
            format('%I.%I', n.nspname, c.relname) AS resource_id, greatest(c.reltuples, -1)::bigint AS estimate
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm')`,
    parts,
    resourceId,
  );
  if (rows.length === 0) throw new ResourceGoneError(`${resourceId} does not exist (or is not a table or view) in the source database.`);
  const described = await describe(session, rows);
  return relationInfo(rows[0], described.get(rows[0].oid)!);
}
