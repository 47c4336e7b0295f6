import type { Sql } from '@crs/persistence/data-source';
import { queryPrepared } from '@crs/persistence/prepared';
import type { IndexingStatus, Store } from '@crs/domain/items/item.events';
import { inActiveCollection } from '@crs/projections/databases/databases.queries';
import type { PermissionCapture } from '@crs/domain/connectors/access-precedence';
import { syncedAccess } from '@crs/domain/connectors/synced-access';
import { connectorSourceStates, syncedAcl, syncedServed } from '@crs/projections/connectors/connectors.queries';

/** A row of rm_items, as the driver returns it (bigint columns as text). */
export interface ItemRow {
  database_id: string;
  item_key: string;
  collection: string;
  store: Store;
  item_id: string;
  kind: string;
  source_type: string;
  title: string | null;
  filename: string | null;
  content_sha256: string;
  content_type: string;
  bytes: string;
  pairs: boolean;
  is_markdown: boolean;
  infer: boolean;
  custom_instructions: string | null;
  user_name: string | null;
  expires_at: Date | null;
  metadata: Record<string, any>;
  additional_metadata: Record<string, any>;
  relations: string[];
  acl: string[] | null;
  app_kind: string | null;
  app_provider: string | null;
  content_version: number;
  ingest_position: string;
  status: IndexingStatus;
  error_code: string | null;
  error_message: string | null;
  chunks_sha256: string | null;
  chunk_count: number;
  chunked_position: string | null;
  created_at: Date;
  updated_at: Date;
  searchable_at: Date | null;
  completed_at: Date | null;
  /** set on a document a connector synced (ItemIngested.connector) */
  connector_id: string | null;
  resource_id: string | null;
  /** the provider's per-document permission (a PermissionCapture), when it captures one */
  provider_permission: unknown;
  /** the document's id at the provider, and the provider's content hash of the synced version */
  external_id: string | null;
  source_content_hash: string | null;
}

/** A row of rm_item_queue: an item waiting for a pipeline stage (`index`: queued or processing; `graph`: graph_creation). */
export interface ItemQueueRow {
  database_id: string;
  item_key: string;
  stage: 'index' | 'graph';
  ingest_position: string;
  content_version: number;
}

/** A row of rm_item_counts: the running totals per collection, store, status and UTC day created. */
export interface ItemCountRow {
  database_id: string;
  collection: string;
  store: Store;
  status: IndexingStatus;
  day: Date;
  items: string;
  chunks: string;
  bytes: string;
}

/** An item is served while it has not expired and its collection is active (`alias` names an rm_items row). */
export const servedItem = (alias: string) => `(${alias}.expires_at IS NULL OR ${alias}.expires_at > now()) AND ${inActiveCollection(alias)}`;

/**
 * The statement that reads inferred memory `i`'s source (the memory or synced document it was inferred from) as `s`,
 * for a LEFT JOIN LATERAL. Its `i.kind = 'inferred'` depends on the outer row alone, so for any other row Postgres
 * skips the subquery instead of scanning the store: as a plain join condition, without statistics on rm_items (a young
 * table), the planner chose a nested loop that read every memory of the database once per hit (40 hits of a
 * 600-memory database: 23 ms).
 */
function inferredSource(i: string, s: string, columns: string): string {
  return `SELECT ${columns} FROM rm_items ${s}
           WHERE ${i}.kind = 'inferred' AND ${s}.database_id = ${i}.database_id AND ${s}.item_id = ${i}.additional_metadata->>'derived_from'
             AND ${s}.collection = ${i}.collection AND ${s}.store = 'memory' AND ${s}.kind <> 'inferred'`;
}

/**
 * Who may see rm_items row `i` and whether it is served, decided when it is read (access control rules 4, 7, 12-14):
 * `joins` goes after `FROM rm_items i`; `acl` is then the ACL that decides (jsonb; NULL: unrestricted), `served`
 * false for a synced document whose connector or resource no longer serves it (connectors.queries.ts). An item
 * ingested through the API is decided by its own `acl` as before; a synced one by its resource's rules as they stand
 * now, so a resource rule change needs no re-index. With `inferred`, an inferred memory whose source is synced
 * follows its source: its own `acl` is a copy taken at inference, while the source's access is decided when read.
 */
export function itemAccess(i: string, opts: { inferred: boolean }): { joins: string; acl: string; served: string } {
  const [s, a] = [`${i}_s`, `${i}_a`];
  let joins = '';
  let acl = syncedAcl(i);
  let served = syncedServed(i);
  if (opts.inferred) {
    joins = `LEFT JOIN LATERAL (${inferredSource(i, s, `${s}.*`)} AND ${s}.connector_id IS NOT NULL LIMIT 1) ${s} ON true`;
    acl = `(CASE WHEN ${s}.connector_id IS NOT NULL THEN ${syncedAcl(s)} ELSE ${acl} END)`;
    served = `(${served} AND (${s}.connector_id IS NULL OR ${syncedServed(s)}))`;
  }
  return { joins: `${joins}\n    CROSS JOIN LATERAL (SELECT ${acl} AS acl, ${served} AS served) ${a}`, acl: `${a}.acl`, served: `${a}.served` };
}

/** The ACL (`access_acl`) and servedness (`served`) of a row read with `itemAccess`. */
export interface ItemAccessColumns {
  /** the ACL that decides who sees the item: its own, or for a synced document the one its rules give now */
  access_acl: string[] | null;
  /** false: a synced document whose connector or resource no longer serves it */
  served: boolean;
}

// ---- the query path (every /query): prepared statements, texts unchanged since they were measured ----

/**
 * What the query path's authoritative check of a hit reads: the item's status, expiry, the ACL that decides who sees
 * it (`acl`: its own, or for a synced document the one its resource's rules give now), the position of its current
 * chunks, the attributes it answers with; for an inferred memory also its source's ACL and whether the source still
 * exists (and is served).
 */
export type ItemCheckRow = Pick<
  ItemRow,
  | 'database_id' | 'item_key' | 'item_id' | 'collection' | 'store' | 'kind' | 'source_type' | 'title' | 'filename' | 'metadata' | 'additional_metadata'
  | 'acl' | 'app_kind' | 'app_provider' | 'relations' | 'status' | 'expires_at' | 'created_at' | 'updated_at' | 'chunked_position'
> & {
  /** inferred memories: the source's current ACL and whether the source still exists */
  source_acl?: string[] | null;
  source_missing?: boolean;
  /**
   * Connector content (a synced document, or a memory inferred from one; query_apps false leaves it out): where its
   * access is decided from. null for everything else.
   */
  synced_source: SyncedSource | null;
};

/** A synced row's connector, resource and per-document permission, and those of an inferred memory's synced source. */
export interface SyncedSource {
  connector_id: string | null;
  resource_id: string | null;
  provider_permission: PermissionCapture | null;
  source_connector_id: string | null;
  source_resource_id: string | null;
  source_provider_permission: PermissionCapture | null;
}

// A synced row (or an inferred memory of a synced source) carries what its access is decided from in one column, NULL
// for every other row; the resources and connectors are read by a second statement only when some row has one
// (`syncedSources`), so a database without connector content runs the statement it ran before, plus a NULL column.
const ITEMS_TO_CHECK = `SELECT i.database_id, i.item_key, i.item_id, i.collection, i.store, i.kind, i.source_type, i.title, i.filename, i.metadata, i.additional_metadata, i.acl,
              i.app_kind, i.app_provider, i.relations, i.status, i.expires_at, i.created_at, i.updated_at, i.chunked_position,
              s.acl AS source_acl, (i.kind = 'inferred' AND s.item_key IS NULL) AS source_missing,
              CASE WHEN i.connector_id IS NOT NULL OR s.connector_id IS NOT NULL THEN jsonb_build_object(
                'connector_id', i.connector_id, 'resource_id', i.resource_id, 'provider_permission', i.provider_permission,
                'source_connector_id', s.connector_id, 'source_resource_id', s.resource_id, 'source_provider_permission', s.provider_permission) END AS synced_source
       FROM rm_items i
       LEFT JOIN LATERAL (${inferredSource('i', 's', 's.item_key, s.acl, s.connector_id, s.resource_id, s.provider_permission')} LIMIT 1) s ON true
       WHERE i.database_id = $1 AND i.item_key = ANY($2) AND ${inActiveCollection('i')}`;

/**
 * The rows the query path checks its hits against, for these item keys of a database: those of an active collection
 * that are served. `acl` is the ACL that decides who sees the item: its own, or for a synced document the one
 * `syncedAccess` gives from its resource and connector as they stand now (a synced document of a connector being
 * deleted, or of a removed resource, is left out); an inferred memory's `source_acl` and `source_missing` likewise.
 */
export async function itemsToCheck(sql: Sql, databaseId: string, keys: string[]): Promise<ItemCheckRow[]> {
  const rows = await queryPrepared<ItemCheckRow>(sql, 'crs_query_items', ITEMS_TO_CHECK, [databaseId, keys]);
  if (!rows.some((r) => r.synced_source !== null)) return rows;
  const sources = await syncedSources(sql, databaseId, rows);
  return rows.filter((row) => {
    const src = row.synced_source;
    if (!src) return true;
    if (src.connector_id !== null) {
      const access = sources.access(src.connector_id, src.resource_id!, src.provider_permission, row.acl);
      if (!access.served) return false;
      row.acl = access.acl ?? null;
    }
    if (src.source_connector_id !== null) {
      const access = sources.access(src.source_connector_id, src.source_resource_id!, src.source_provider_permission, row.source_acl ?? null);
      row.source_acl = access.served ? (access.acl ?? null) : null;
      if (!access.served) row.source_missing = true;
    }
    return true;
  });
}

/**
 * What each store of a database holds, as far as the query filters care: the collections with items in it (from the
 * per-group counts, so a few rows whatever the size) and whether any of its items expires.
 */
export interface StoreFacets {
  collections: string[];
  expiring: boolean;
}

const STORE_FACETS = `SELECT s.store,
    ARRAY(SELECT DISTINCT c.collection FROM rm_item_counts c WHERE c.database_id = $1 AND c.store = s.store AND c.items > 0) AS collections,
    EXISTS (SELECT 1 FROM rm_items i WHERE i.database_id = $1 AND i.store = s.store AND i.expires_at IS NOT NULL) AS expiring
  FROM unnest($2::text[]) AS s(store)`;

export async function storeFacets(sql: Sql, databaseId: string, stores: readonly Store[]): Promise<Map<Store, StoreFacets>> {
  const rows = await queryPrepared<{ store: Store; collections: string[]; expiring: boolean }>(sql, 'crs_store_facets', STORE_FACETS, [databaseId, stores]);
  return new Map(rows.map((r) => [r.store, { collections: r.collections, expiring: r.expiring }]));
}

/**
 * The current state of the resources and connectors of these rows' synced sources (one statement), and the access of
 * a synced document under them (`syncedAccess`, the decision the SQL of `itemAccess` makes too).
 */
async function syncedSources(sql: Sql, databaseId: string, rows: ItemCheckRow[]) {
  const key = (connectorId: string, resourceId: string) => `${connectorId}\u0000${resourceId}`;
  const pairs = new Map<string, [string, string]>();
  for (const { synced_source: src } of rows) {
    if (src?.connector_id) pairs.set(key(src.connector_id, src.resource_id!), [src.connector_id, src.resource_id!]);
    if (src?.source_connector_id) pairs.set(key(src.source_connector_id, src.source_resource_id!), [src.source_connector_id, src.source_resource_id!]);
  }
  const list = [...pairs.values()];
  const states = await connectorSourceStates(sql, databaseId, list.map((p) => p[0]), list.map((p) => p[1]));
  const byKey = new Map(states.map((st) => [key(st.connector_id, st.resource_id), st]));
  return {
    access(connectorId: string, resourceId: string, permission: PermissionCapture | null, documentRule: string[] | null) {
      const st = byKey.get(key(connectorId, resourceId));
      return syncedAccess({ document: permission ?? undefined, documentRule: documentRule ?? undefined, resource: st?.resource ?? null, connector: st?.connector ?? null });
    },
  };
}

/** One neighbour of a hit in its conversation: `dir` 1 after it, -1 before; `seq` its distance; `same` the same conversation. */
export interface ConversationNeighbourRow {
  hit: string;
  item_key: string;
  dir: number;
  seq: string;
  same: boolean;
  /** the neighbour's chunk list (null until it is chunked) and the log position of the event that recorded it */
  chunks_sha256: string | null;
  chunked_position: string | null;
}

/**
 * For each hit ($2), up to $3 memories after it and $4 before it in ingest order (created_at, then log position),
 * in the same collection, not inferred; `same`: same additional metadata and user name (the same conversation).
 * Hits without additional metadata have none: nothing marks them as turns of one conversation.
 */
/**
 * The neighbour query for `after` and `before` neighbours. The limits are literals, not parameters: with `LIMIT $3`
 * Postgres estimates the generic plan far dearer than a custom one and plans the prepared statement again on every
 * execution (about 0.6 ms of its 1.6); with literals it settles on the generic plan after five executions.
 */
const neighboursSql = (after: number, before: number) => `
  SELECT h.item_key AS hit, n.item_key, n.dir, n.seq, n.same, n.chunks_sha256, n.chunked_position
  FROM rm_items h
  CROSS JOIN LATERAL (
    SELECT a.item_key, 1 AS dir, row_number() OVER (ORDER BY a.created_at, a.ingest_position) AS seq,
           (a.additional_metadata = h.additional_metadata AND a.user_name IS NOT DISTINCT FROM h.user_name) AS same, a.chunks_sha256, a.chunked_position
    FROM (SELECT x.item_key, x.created_at, x.ingest_position, x.additional_metadata, x.user_name, x.chunks_sha256, x.chunked_position FROM rm_items x
          WHERE x.database_id = h.database_id AND x.collection = h.collection AND x.store = 'memory' AND x.kind <> 'inferred'
            AND (x.created_at, x.ingest_position) > (h.created_at, h.ingest_position)
          ORDER BY x.created_at, x.ingest_position LIMIT ${after}) a
    UNION ALL
    SELECT b.item_key, -1 AS dir, row_number() OVER (ORDER BY b.created_at DESC, b.ingest_position DESC) AS seq,
           (b.additional_metadata = h.additional_metadata AND b.user_name IS NOT DISTINCT FROM h.user_name) AS same, b.chunks_sha256, b.chunked_position
    FROM (SELECT y.item_key, y.created_at, y.ingest_position, y.additional_metadata, y.user_name, y.chunks_sha256, y.chunked_position FROM rm_items y
          WHERE y.database_id = h.database_id AND y.collection = h.collection AND y.store = 'memory' AND y.kind <> 'inferred'
            AND (y.created_at, y.ingest_position) < (h.created_at, h.ingest_position)
          ORDER BY y.created_at DESC, y.ingest_position DESC LIMIT ${before}) b
  ) n
  WHERE h.database_id = $1 AND h.item_key = ANY($2) AND h.store = 'memory' AND h.kind <> 'inferred' AND h.additional_metadata <> '{}'::jsonb`;

/** The memories right after (up to `after`) and before (up to `before`) each hit in its collection's ingest order. */
export function conversationNeighbours(sql: Sql, databaseId: string, hitKeys: string[], after: number, before: number): Promise<ConversationNeighbourRow[]> {
  if (!Number.isSafeInteger(after) || !Number.isSafeInteger(before) || after < 0 || before < 0) throw new Error(`neighbour counts must be whole numbers, got ${after} and ${before}`);
  return queryPrepared<ConversationNeighbourRow>(sql, `crs_query_neighbours_${after}_${before}`, neighboursSql(after, before), [databaseId, hitKeys]);
}

/** The keys of the items with these ids in one collection and store (forceful relations). */
export function itemKeysWithIds(sql: Sql, databaseId: string, collection: string, store: Store, itemIds: string[]): Promise<Pick<ItemRow, 'item_key'>[]> {
  return sql.query('SELECT item_key FROM rm_items WHERE database_id = $1 AND collection = $2 AND store = $3 AND item_id = ANY($4)', [databaseId, collection, store, itemIds]);
}

// ---- the indexing pipeline and the search index ----

/** A pipeline lease taken on an item waiting for a stage. */
export interface ItemClaim {
  database_id: string;
  item_key: string;
  content_version: number;
  attempts: number;
}

/** How many items wait for the index stage (queued or processing). */
export async function itemsWaitingForIndexing(sql: Sql): Promise<number> {
  const [row] = await sql.query(`SELECT count(*)::int AS n FROM rm_item_queue WHERE stage = 'index'`);
  return row.n;
}

/**
 * Leases (pipeline_leases) up to `limit` items waiting for a stage, in ingest order, whose lease is free, expired or
 * taken on an older version. rm_item_queue holds exactly the items of rm_items waiting for a stage (the items read
 * model keeps it).
 */
export function claimItemsWaitingForStage(sql: Sql, owner: string, leaseMs: number, limit: number, stage: 'index' | 'graph'): Promise<ItemClaim[]> {
  return sql.query(
    `INSERT INTO pipeline_leases (database_id, item_key, content_version, owner, lease_until, attempts)
       SELECT i.database_id, i.item_key, i.content_version, $1, now() + ($2 || ' milliseconds')::interval, 1
       FROM rm_item_queue i LEFT JOIN pipeline_leases l ON l.database_id = i.database_id AND l.item_key = i.item_key
       WHERE i.stage = $4
         AND (l.item_key IS NULL OR l.lease_until < now() OR l.content_version < i.content_version)
       ORDER BY i.ingest_position
       LIMIT $3
       ON CONFLICT (database_id, item_key) DO UPDATE
         SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, content_version = EXCLUDED.content_version,
             attempts = CASE WHEN pipeline_leases.content_version = EXCLUDED.content_version THEN pipeline_leases.attempts + 1 ELSE 1 END
         WHERE pipeline_leases.lease_until < now() OR pipeline_leases.content_version < EXCLUDED.content_version
       RETURNING database_id, item_key, content_version, attempts`,
    [owner, String(leaseMs), limit, stage],
  );
}

/**
 * The rows of these items (`databaseIds[i]`, `itemKeys[i]`), by primary key alone: a join with other tables let the
 * planner, on the fresh statistics of a young database, scan every item of the database once per key.
 */
export function itemsByKeys(sql: Sql, databaseIds: string[], itemKeys: string[]): Promise<ItemRow[]> {
  return sql.query('SELECT * FROM rm_items WHERE (database_id, item_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))', [databaseIds, itemKeys]);
}

/** The rows of these items that are in an active collection (what the search index may write). */
export function itemsInActiveCollectionsByKeys(sql: Sql, databaseIds: string[], itemKeys: string[]): Promise<ItemRow[]> {
  return sql.query(
    `SELECT i.* FROM rm_items i WHERE (i.database_id, i.item_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
             AND EXISTS (SELECT 1 FROM rm_collections c WHERE c.database_id = i.database_id AND c.name = i.collection AND c.status = 'active')`,
    [databaseIds, itemKeys],
  );
}

/** The current content version of these items (those that still exist). */
export function contentVersionsByKeys(sql: Sql, databaseIds: string[], itemKeys: string[]): Promise<Pick<ItemRow, 'database_id' | 'item_key' | 'content_version'>[]> {
  return sql.query('SELECT database_id, item_key, content_version FROM rm_items WHERE (database_id, item_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))', [databaseIds, itemKeys]);
}

/** The memories inferred from a memory (`derived_from` its id) in its collection. */
export function memoriesDerivedFrom(sql: Sql, databaseId: string, collection: string, sourceItemId: string): Promise<Pick<ItemRow, 'item_key' | 'item_id'>[]> {
  return sql.query(
    `SELECT item_key, item_id FROM rm_items WHERE database_id = $1 AND collection = $2 AND store = 'memory' AND additional_metadata->>'derived_from' = $3`,
    [databaseId, collection, sourceItemId],
  );
}

/** The memories inferred from a memory that a new inference no longer produced (their ids are not in `keptIds`). */
export function memoriesDerivedFromExcept(sql: Sql, databaseId: string, collection: string, sourceItemId: string, keptIds: string[]): Promise<Pick<ItemRow, 'item_key' | 'item_id'>[]> {
  return sql.query(
    `SELECT item_key, item_id FROM rm_items WHERE database_id = $1 AND collection = $2 AND store = 'memory' AND additional_metadata->>'derived_from' = $3 AND NOT (item_id = ANY($4))`,
    [databaseId, collection, sourceItemId, keptIds],
  );
}

/** A database's items that errored because the worker's embedder was not the database's. */
export function itemsErroredWithEmbedderMismatch(sql: Sql, databaseId: string): Promise<Pick<ItemRow, 'item_key'>[]> {
  return sql.query(`SELECT item_key FROM rm_items WHERE database_id = $1 AND status = 'errored' AND error_code = 'EMBEDDER_MISMATCH'`, [databaseId]);
}

// ---- the context endpoints ----

/**
 * The items with this id in a collection (and store, when given) of an active collection: one per store at most,
 * with the ACL that decides who sees each and whether it is served (`itemAccess`).
 */
export function itemsWithId(sql: Sql, databaseId: string, collection: string, itemId: string, store?: Store): Promise<(ItemRow & ItemAccessColumns)[]> {
  const access = itemAccess('i', { inferred: true });
  return sql.query(
    `SELECT i.*, ${access.acl} AS access_acl, ${access.served} AS served FROM rm_items i ${access.joins}
     WHERE i.database_id = $1 AND i.collection = $2 AND i.item_id = $3 ${store ? 'AND i.store = $4' : ''} AND ${inActiveCollection('i')}`,
    store ? [databaseId, collection, itemId, store] : [databaseId, collection, itemId],
  );
}

/**
 * The items with this id in a collection (one per store, or the one of `store`) that are served: their key, the ACL
 * that decides who sees them (`itemAccess`) and source type.
 */
export function servedItemsWithId(sql: Sql, databaseId: string, collection: string, itemId: string, store?: Store): Promise<Pick<ItemRow, 'item_key' | 'acl' | 'source_type'>[]> {
  const access = itemAccess('i', { inferred: true });
  return sql.query(
    `SELECT i.item_key, ${access.acl} AS acl, i.source_type FROM rm_items i ${access.joins}
     WHERE i.database_id = $1 AND i.collection = $2 AND i.item_id = $3 AND ${servedItem('i')} AND ${access.served} ${store ? 'AND i.store = $4' : ''}`,
    store ? [databaseId, collection, itemId, store] : [databaseId, collection, itemId],
  );
}

export type ItemStatusRow = Pick<ItemRow, 'item_id' | 'collection' | 'store' | 'source_type' | 'title' | 'status' | 'error_code' | 'error_message' | 'updated_at'>;

/** The indexing status of the items with these ids in a database (or one collection), of active collections. */
export function itemStatusesByIds(sql: Sql, databaseId: string, ids: string[], collection?: string): Promise<ItemStatusRow[]> {
  return sql.query(
    `SELECT item_id, collection, store, source_type, title, status, error_code, error_message, updated_at FROM rm_items i
     WHERE database_id = $1 AND item_id = ANY($2) ${collection ? 'AND collection = $3' : ''} AND ${inActiveCollection('i')} ORDER BY item_id, collection, store`,
    collection ? [databaseId, ids, collection] : [databaseId, ids],
  );
}

/** What serving an item's content needs; `acl`: the ACL that decides who sees it now (`itemAccess`). */
export type ItemContentRow = Pick<ItemRow, 'content_sha256' | 'content_type' | 'filename' | 'content_version' | 'acl' | 'expires_at'>;

/**
 * What serving an item's content needs (a presigned URL), if the item exists in an active collection and is served
 * (a synced document whose connector or resource no longer serves it is gone).
 */
export async function itemContent(sql: Sql, databaseId: string, itemKey: string): Promise<ItemContentRow | undefined> {
  const access = itemAccess('i', { inferred: true });
  const [item]: ItemContentRow[] = await sql.query(
    `SELECT i.content_sha256, i.content_type, i.filename, i.content_version, ${access.acl} AS acl, i.expires_at FROM rm_items i ${access.joins}
       WHERE i.database_id = $1 AND i.item_key = $2 AND ${inActiveCollection('i')} AND ${access.served}`,
    [databaseId, itemKey],
  );
  return item;
}

/** The source fields /context/list filters on (`filters.source_fields`), and the column or value each one is. */
const SOURCE_FIELD_COLUMNS = { title: 'title', type: 'source_type', url: "additional_metadata->>'url'", description: "additional_metadata->>'description'" } as const;
export type ListableSourceField = keyof typeof SOURCE_FIELD_COLUMNS;
export const isListableSourceField = (f: string): f is ListableSourceField => Object.hasOwn(SOURCE_FIELD_COLUMNS, f);

/** One condition of a listing: a source field equal to a value, or (additional) metadata containing an object. */
export type ItemListFilter = { sourceField: ListableSourceField; equals: string } | { metadata: 'metadata' | 'additional_metadata'; contains: unknown };

export interface ItemListing {
  databaseId: string;
  collection: string;
  store: Store;
  ids?: string[];
  /** only items these principals may see; null: no ACL check */
  caller: string[] | null;
  /** in the order given */
  filters: ItemListFilter[];
  page: number;
  pageSize: number;
}

/**
 * A page of a collection's items of one store, in creation order, and how many there are: not expired, of an active
 * collection, not inferred (inferred memories are listed under their source), served, and with `caller` only those
 * whose deciding ACL (`itemAccess`: a synced document's from its resource's rules as they stand) lets it see them.
 */
export async function listItems(sql: Sql, q: ItemListing): Promise<{ total: number; rows: ItemRow[] }> {
  const access = itemAccess('i', { inferred: false });
  const where = ['i.database_id = $1', 'i.collection = $2', 'i.store = $3', '(i.expires_at IS NULL OR i.expires_at > now())', "i.kind <> 'inferred'", inActiveCollection('i'), access.served];
  const params: unknown[] = [q.databaseId, q.collection, q.store];
  if (q.ids !== undefined) {
    params.push(q.ids);
    where.push(`i.item_id = ANY($${params.length})`);
  }
  if (q.caller) {
    params.push(q.caller);
    const acl = access.acl;
    where.push(`(${acl} IS NULL OR jsonb_array_length(${acl}) = 0 OR ${acl} ? '__public__' OR ${acl} ?| $${params.length}::text[])`);
  }
  for (const f of q.filters) {
    if ('sourceField' in f) {
      params.push(f.equals);
      where.push(`i.${SOURCE_FIELD_COLUMNS[f.sourceField]} = $${params.length}`);
    } else {
      params.push(JSON.stringify(f.contains));
      where.push(`i.${f.metadata} @> $${params.length}::jsonb`);
    }
  }
  const clause = where.join(' AND ');
  const from = `rm_items i ${access.joins}`;
  const [{ total }] = await sql.query(`SELECT count(*)::int AS total FROM ${from} WHERE ${clause}`, params);
  const rows: ItemRow[] = await sql.query(`SELECT i.* FROM ${from} WHERE ${clause} ORDER BY i.created_at, i.item_id LIMIT ${q.pageSize} OFFSET ${(q.page - 1) * q.pageSize}`, params);
  return { total, rows };
}

/** The memories inferred from these items of a collection, by id. */
export function inferredFrom(sql: Sql, databaseId: string, collection: string, sourceIds: string[]): Promise<ItemRow[]> {
  return sql.query(
    `SELECT * FROM rm_items WHERE database_id = $1 AND collection = $2 AND kind = 'inferred' AND additional_metadata->>'derived_from' = ANY($3) ORDER BY item_id`,
    [databaseId, collection, sourceIds],
  );
}

// ---- statistics ----

/** A database's (or collection's) items, chunks and bytes per store and status, of active collections. */
export function itemTotals(sql: Sql, databaseId: string, collection?: string): Promise<{ store: string; status: string; n: number; chunks: number; bytes: string }[]> {
  return sql.query(
    `SELECT store, status, sum(items)::int AS n, sum(chunks)::int AS chunks, sum(bytes)::bigint AS bytes
         FROM rm_item_counts WHERE database_id = $1 ${countsScope(collection)} GROUP BY store, status`,
    collection ? [databaseId, collection] : [databaseId],
  );
}

/** Items and bytes created per UTC day, today and the 29 days before, of active collections. */
export function itemGrowth(sql: Sql, databaseId: string, collection?: string): Promise<{ day: string; items: number; bytes: string }[]> {
  return sql.query(
    `SELECT day::text AS day, sum(items)::int AS items, sum(bytes)::bigint AS bytes
         FROM rm_item_counts WHERE database_id = $1 ${countsScope(collection)} AND day > (now() AT TIME ZONE 'UTC')::date - 30 GROUP BY 1 ORDER BY 1`,
    collection ? [databaseId, collection] : [databaseId],
  );
}

/** A collection being deleted counts no more (its rows stay until the purge has run). */
const countsScope = (collection?: string) => `${collection ? 'AND collection = $2' : ''} AND ${inActiveCollection('rm_item_counts')}`;

/** A synced document's row, as the connector sync and its processors find them. */
export type SyncedItemRow = Pick<ItemRow, 'database_id' | 'item_key' | 'item_id' | 'collection' | 'store' | 'resource_id' | 'ingest_position' | 'external_id' | 'source_content_hash'>;

/**
 * The items a connector synced (of one resource when `resourceId` is given), whatever their collection's state, in
 * key order, `limit` at a time after `afterKey`: the documents a sync prunes, and those a connector's or resource's
 * deletion removes. `ingestedBefore`: only the versions ingested before that log position (a resource's removal
 * leaves alone what a later generation synced).
 */
export function syncedItems(
  sql: Sql,
  q: { connectorId: string; resourceId?: string; limit: number; afterKey?: string; ingestedBefore?: number },
): Promise<SyncedItemRow[]> {
  return sql.query(
    `SELECT database_id, item_key, item_id, collection, store, resource_id, ingest_position, external_id, source_content_hash FROM rm_items
     WHERE connector_id = $1 AND ($2::text IS NULL OR resource_id = $2) AND item_key > $3 AND ($4::bigint IS NULL OR ingest_position < $4)
     ORDER BY item_key LIMIT $5`,
    [q.connectorId, q.resourceId ?? null, q.afterKey ?? '', q.ingestedBefore ?? null, q.limit],
  );
}
