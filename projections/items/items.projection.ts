import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import { inSegments, REPLAYING_SETTING, type ReadModelProjection } from '@crs/persistence/projection';
import { storableExpiry } from '@crs/domain/items/expiry';
import { isEventOf } from '@crs/domain/domain-event';

/**
 * Every ingested item (memory, file, app item) with its indexing status: what /context/status, /context/list,
 * stats, the pipeline's work queue and the query path's authoritative check (status, expiry, ACL) read.
 */
/** rm_item_queue's rule, shared by its trigger and afterReplay: the statuses that wait for a stage, and which stage. */
const WAITING = `'queued', 'processing', 'graph_creation'`;
const stageOf = (status: string) => `CASE WHEN ${status} = 'graph_creation' THEN 'graph' ELSE 'index' END`;

export const itemsProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'items',
  // rm_items first: emptying it (rebuild) lets its triggers clear the derived tables before they are emptied too.
  tables: ['rm_items', 'rm_item_queue', 'rm_item_counts'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS rm_items (
      database_id uuid NOT NULL,
      item_key text NOT NULL,
      collection text NOT NULL,
      store text NOT NULL,
      item_id text NOT NULL,
      kind text NOT NULL,
      source_type text NOT NULL,
      title text,
      filename text,
      content_sha256 text NOT NULL,
      content_type text NOT NULL,
      bytes bigint NOT NULL,
      pairs boolean NOT NULL,
      is_markdown boolean NOT NULL,
      infer boolean NOT NULL,
      custom_instructions text,
      user_name text,
      expires_at timestamptz,
      metadata jsonb NOT NULL,
      additional_metadata jsonb NOT NULL,
      relations jsonb NOT NULL,
      acl jsonb,
      app_kind text,
      app_provider text,
      content_version integer NOT NULL,
      ingest_position bigint NOT NULL,
      status text NOT NULL,
      error_code text,
      error_message text,
      chunks_sha256 text,
      chunk_count integer NOT NULL DEFAULT 0,
      chunked_position bigint,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      searchable_at timestamptz,
      completed_at timestamptz,
      connector_id uuid,
      resource_id text,
      provider_permission jsonb,
      external_id text,
      source_content_hash text,
      PRIMARY KEY (database_id, item_key)
    ) WITH (fillfactor = 75)`,
    // A synced document's source (ItemIngested.connector): its access is decided on each query from the provider's
    // per-document permission and its resource's rules (ACL rule 12), and its connector's deletion finds it here.
    `ALTER TABLE rm_items ADD COLUMN IF NOT EXISTS connector_id uuid, ADD COLUMN IF NOT EXISTS resource_id text, ADD COLUMN IF NOT EXISTS provider_permission jsonb,
       ADD COLUMN IF NOT EXISTS external_id text, ADD COLUMN IF NOT EXISTS source_content_hash text`,
    `CREATE INDEX IF NOT EXISTS rm_items_connector ON rm_items (connector_id, resource_id) WHERE connector_id IS NOT NULL`,
    // No index covers status (the pipeline's queue is rm_item_queue) and the pages keep room (fillfactor): an item's
    // status moves are HOT updates that write no index entry.
    `CREATE INDEX IF NOT EXISTS rm_items_lookup ON rm_items (database_id, item_id)`,
    `CREATE INDEX IF NOT EXISTS rm_items_collection ON rm_items (database_id, collection, store, created_at)`,
    // ingest order within a collection: the neighbours of a memory (conversation context, libs/domain/src/retrieval/conversation-context.ts)
    `CREATE INDEX IF NOT EXISTS rm_items_sequence ON rm_items (database_id, collection, store, created_at, ingest_position)`,
    // Whether a store holds any item that expires (storeFacets): queries of a store without one leave the engine's
    // expiry clause out. Status moves change no column it covers, so they stay HOT updates.
    `CREATE INDEX IF NOT EXISTS rm_items_expiring ON rm_items (database_id, store) WHERE expires_at IS NOT NULL`,
    // The pipeline's work queue: the items waiting for a stage (index: queued or processing; graph: graph_creation),
    // in ingest order. Small, so claiming never walks the whole item table.
    `CREATE TABLE IF NOT EXISTS rm_item_queue (
      database_id uuid NOT NULL,
      item_key text NOT NULL,
      stage text NOT NULL,
      ingest_position bigint NOT NULL,
      content_version integer NOT NULL,
      PRIMARY KEY (database_id, item_key)
    )`,
    `CREATE INDEX IF NOT EXISTS rm_item_queue_stage ON rm_item_queue (stage, ingest_position)`,
    // What /databases/stats reports, kept per (database, collection, store, status, UTC day created): reading it costs
    // the same at a hundred items as at a million. A group whose items all moved on is removed.
    `CREATE TABLE IF NOT EXISTS rm_item_counts (
      database_id uuid NOT NULL,
      collection text NOT NULL,
      store text NOT NULL,
      status text NOT NULL,
      day date NOT NULL,
      items bigint NOT NULL,
      chunks bigint NOT NULL,
      bytes bigint NOT NULL,
      PRIMARY KEY (database_id, collection, store, status, day)
    )`,
    `CREATE INDEX IF NOT EXISTS rm_item_counts_empty ON rm_item_counts (database_id) WHERE items = 0`,
    // Both derived tables follow rm_items through statement-level triggers on its transition tables: every write to
    // rm_items (one event, a folded batch, a database's deletion, a rebuild's emptying) keeps them exact, set-based.
    `CREATE OR REPLACE FUNCTION rm_items_derive() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      -- A replay (rebuild, verify) derives both tables once at its end (afterReplay): kept per statement over a whole
      -- log in one transaction, they pile up row versions no one can prune yet.
      IF current_setting('${REPLAYING_SETTING}', true) = 'on' THEN RETURN NULL; END IF;
      IF TG_OP = 'DELETE' THEN
        DELETE FROM rm_item_queue q USING old_rows o WHERE q.database_id = o.database_id AND q.item_key = o.item_key;
      ELSE
        INSERT INTO rm_item_queue (database_id, item_key, stage, ingest_position, content_version)
          SELECT n.database_id, n.item_key, ${stageOf('n.status')}, n.ingest_position, n.content_version
          FROM new_rows n WHERE n.status IN (${WAITING})
          ON CONFLICT (database_id, item_key) DO UPDATE
            SET stage = EXCLUDED.stage, ingest_position = EXCLUDED.ingest_position, content_version = EXCLUDED.content_version
            WHERE (rm_item_queue.stage, rm_item_queue.ingest_position, rm_item_queue.content_version)
              IS DISTINCT FROM (EXCLUDED.stage, EXCLUDED.ingest_position, EXCLUDED.content_version);
        DELETE FROM rm_item_queue q USING new_rows n
          WHERE q.database_id = n.database_id AND q.item_key = n.item_key AND n.status NOT IN (${WAITING});
      END IF;
      IF TG_OP = 'INSERT' THEN
        INSERT INTO rm_item_counts
          SELECT database_id, collection, store, status, (created_at AT TIME ZONE 'UTC')::date, count(*), sum(chunk_count), sum(bytes)
          FROM new_rows GROUP BY 1, 2, 3, 4, 5
          ON CONFLICT (database_id, collection, store, status, day) DO UPDATE
            SET items = rm_item_counts.items + EXCLUDED.items, chunks = rm_item_counts.chunks + EXCLUDED.chunks, bytes = rm_item_counts.bytes + EXCLUDED.bytes;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO rm_item_counts
          SELECT database_id, collection, store, status, (created_at AT TIME ZONE 'UTC')::date, -count(*), -sum(chunk_count), -sum(bytes)
          FROM old_rows GROUP BY 1, 2, 3, 4, 5
          ON CONFLICT (database_id, collection, store, status, day) DO UPDATE
            SET items = rm_item_counts.items + EXCLUDED.items, chunks = rm_item_counts.chunks + EXCLUDED.chunks, bytes = rm_item_counts.bytes + EXCLUDED.bytes;
      ELSE
        INSERT INTO rm_item_counts
          SELECT database_id, collection, store, status, day, sum(items), sum(chunks), sum(bytes) FROM (
            SELECT database_id, collection, store, status, (created_at AT TIME ZONE 'UTC')::date AS day, 1 AS items, chunk_count::bigint AS chunks, bytes FROM new_rows
            UNION ALL
            SELECT database_id, collection, store, status, (created_at AT TIME ZONE 'UTC')::date, -1, -chunk_count::bigint, -bytes FROM old_rows
          ) d GROUP BY 1, 2, 3, 4, 5 HAVING sum(items) <> 0 OR sum(chunks) <> 0 OR sum(bytes) <> 0
          ON CONFLICT (database_id, collection, store, status, day) DO UPDATE
            SET items = rm_item_counts.items + EXCLUDED.items, chunks = rm_item_counts.chunks + EXCLUDED.chunks, bytes = rm_item_counts.bytes + EXCLUDED.bytes;
      END IF;
      DELETE FROM rm_item_counts WHERE items = 0;
      RETURN NULL;
    END $fn$`,
    `CREATE OR REPLACE TRIGGER rm_items_derive_insert AFTER INSERT ON rm_items REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION rm_items_derive()`,
    `CREATE OR REPLACE TRIGGER rm_items_derive_update AFTER UPDATE ON rm_items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION rm_items_derive()`,
    `CREATE OR REPLACE TRIGGER rm_items_derive_delete AFTER DELETE ON rm_items REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION rm_items_derive()`,
  ],
  handles: ['ItemIngested', 'StatusAdvanced', 'ItemChunked', 'GraphExtracted', 'ItemDeleted', 'ItemMetadataUpdated', 'AclChanged', 'ProviderPermissionChanged', 'DatabaseDeleted', 'CollectionDeleted'],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    const at = event.metadata.occurredAt;
    switch (event.type) {
      case 'ItemIngested': {
        const d = event.data;
        // Upsert: a new content version replaces the row; created_at survives the replacement.
        await sql.query(
          `INSERT INTO rm_items (database_id, item_key, collection, store, item_id, kind, source_type, title, filename, content_sha256, content_type, bytes,
             pairs, is_markdown, infer, custom_instructions, user_name, expires_at, metadata, additional_metadata, relations, acl, app_kind, app_provider,
             content_version, ingest_position, status, created_at, updated_at, connector_id, resource_id, provider_permission, external_id, source_content_hash)
           VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,'queued',$27,$27,$28,$29,$30,$31,$32)
           ON CONFLICT (database_id, item_key) DO UPDATE SET
             kind = EXCLUDED.kind, source_type = EXCLUDED.source_type, title = EXCLUDED.title, filename = EXCLUDED.filename,
             content_sha256 = EXCLUDED.content_sha256, content_type = EXCLUDED.content_type, bytes = EXCLUDED.bytes, pairs = EXCLUDED.pairs,
             is_markdown = EXCLUDED.is_markdown, infer = EXCLUDED.infer, custom_instructions = EXCLUDED.custom_instructions, user_name = EXCLUDED.user_name,
             expires_at = EXCLUDED.expires_at, metadata = EXCLUDED.metadata, additional_metadata = EXCLUDED.additional_metadata, relations = EXCLUDED.relations,
             acl = EXCLUDED.acl, app_kind = EXCLUDED.app_kind, app_provider = EXCLUDED.app_provider, content_version = EXCLUDED.content_version,
             ingest_position = EXCLUDED.ingest_position, status = 'queued', error_code = NULL, error_message = NULL, chunks_sha256 = NULL, chunk_count = 0,
             chunked_position = NULL, updated_at = EXCLUDED.updated_at, searchable_at = NULL, completed_at = NULL,
             connector_id = EXCLUDED.connector_id, resource_id = EXCLUDED.resource_id, provider_permission = EXCLUDED.provider_permission,
             external_id = EXCLUDED.external_id, source_content_hash = EXCLUDED.source_content_hash
           WHERE rm_items.ingest_position < EXCLUDED.ingest_position`,
          [
            d.databaseId, d.itemKey, d.collection, d.store, d.itemId, d.kind, d.sourceType, d.title, d.content.filename ?? null, d.content.sha256, d.content.contentType,
            d.content.bytes, d.pairs, d.isMarkdown, d.infer, d.customInstructions, d.userName, storableExpiry(d.expiresAt), JSON.stringify(d.metadata), JSON.stringify(d.additionalMetadata),
            JSON.stringify(d.relations), d.acl === undefined ? null : JSON.stringify(d.acl), d.appKind ?? null, d.appProvider ?? null, event.revision, event.position, at,
            d.connector?.connectorId ?? null, d.connector?.resourceId ?? null, d.connector?.permission ? JSON.stringify(d.connector.permission) : null,
            d.connector?.externalId ?? null, d.connector?.contentHash ?? null,
          ],
        );
        return;
      }
      case 'StatusAdvanced': {
        const d = event.data;
        await sql.query(
          `UPDATE rm_items SET status = $4, error_code = $5, error_message = $6, updated_at = $7,
             searchable_at = CASE WHEN $4 = 'graph_creation' THEN $7::timestamptz ELSE searchable_at END,
             completed_at = CASE WHEN $4 = 'completed' THEN $7::timestamptz ELSE completed_at END
           WHERE database_id = $1 AND item_key = $2 AND content_version = $3`,
          [d.databaseId, d.itemKey, d.contentVersion, d.status, d.errorCode ?? null, d.message ?? null, at],
        );
        return;
      }
      case 'ItemChunked': {
        const d = event.data;
        await sql.query(
          `UPDATE rm_items SET chunks_sha256 = $4, chunk_count = $5, chunked_position = $6, updated_at = $7,
             status = CASE WHEN status = 'queued' THEN 'processing' ELSE status END
           WHERE database_id = $1 AND item_key = $2 AND content_version = $3`,
          [d.databaseId, d.itemKey, d.contentVersion, d.chunksSha256, d.chunkCount, event.position, at],
        );
        return;
      }
      case 'GraphExtracted': {
        // Recorded once the chunks are in the search index: it stands for graph_creation (searchable) too.
        const d = event.data;
        await sql.query(
          `UPDATE rm_items SET status = 'graph_creation', searchable_at = $4, updated_at = $4
           WHERE database_id = $1 AND item_key = $2 AND content_version = $3 AND status IN ('queued', 'processing')`,
          [d.databaseId, d.itemKey, d.contentVersion, at],
        );
        return;
      }
      case 'ItemMetadataUpdated': {
        const d = event.data;
        await sql.query(
          `UPDATE rm_items SET metadata = COALESCE($3, metadata), additional_metadata = COALESCE($4, additional_metadata),
             title = CASE WHEN $5 THEN $6 ELSE title END, updated_at = $7
           WHERE database_id = $1 AND item_key = $2`,
          [d.databaseId, d.itemKey, d.metadata === undefined ? null : JSON.stringify(d.metadata), d.additionalMetadata === undefined ? null : JSON.stringify(d.additionalMetadata), d.title !== undefined, d.title ?? null, at],
        );
        return;
      }
      case 'AclChanged':
        await sql.query(`UPDATE rm_items SET acl = $3, updated_at = $4 WHERE database_id = $1 AND item_key = $2`, [event.data.databaseId, event.data.itemKey, JSON.stringify(event.data.acl), at]);
        return;
      case 'ProviderPermissionChanged':
        await sql.query(`UPDATE rm_items SET provider_permission = $3, updated_at = $4 WHERE database_id = $1 AND item_key = $2`, [
          event.data.databaseId,
          event.data.itemKey,
          event.data.permission === null ? null : JSON.stringify(event.data.permission),
          at,
        ]);
        return;
      case 'ItemDeleted':
        await sql.query(`DELETE FROM rm_items WHERE database_id = $1 AND item_key = $2`, [event.data.databaseId, event.data.itemKey]);
        return;
      case 'DatabaseDeleted':
        await sql.query(`DELETE FROM rm_items WHERE database_id = $1`, [event.data.databaseId]);
        return;
      case 'CollectionDeleted':
        await sql.query(`DELETE FROM rm_items WHERE database_id = $1 AND collection = $2`, [event.data.databaseId, event.data.collection]);
        return;
    }
  },
  /**
   * A page at once: the rows its item events touch are loaded in one query, every event is applied to them in
   * memory with exactly the rules of `apply` (same conditions, same values), and the result is written back with
   * one multi-row upsert and one delete. Database and collection deletions run on their own, between the runs.
   */
  async applyBatch(events: RecordedEvent[], sql: Sql): Promise<void> {
    await inSegments(
      events,
      (e) => e.type === 'DatabaseDeleted' || e.type === 'CollectionDeleted',
      (run) => foldItems(run, sql),
      (e) => itemsProjection.apply(e, sql),
    );
  },
  /** The derived tables the triggers keep live, computed once from rm_items at the end of a replay. */
  async afterReplay(sql: Sql): Promise<void> {
    await sql.query('DELETE FROM rm_item_queue');
    await sql.query(`INSERT INTO rm_item_queue (database_id, item_key, stage, ingest_position, content_version)
      SELECT database_id, item_key, ${stageOf('status')}, ingest_position, content_version
      FROM rm_items WHERE status IN (${WAITING})`);
    await sql.query('DELETE FROM rm_item_counts');
    await sql.query(`INSERT INTO rm_item_counts (database_id, collection, store, status, day, items, chunks, bytes)
      SELECT database_id, collection, store, status, (created_at AT TIME ZONE 'UTC')::date, count(*), sum(chunk_count), sum(bytes)
      FROM rm_items GROUP BY 1, 2, 3, 4, 5`);
  },
};

/** rm_items columns and their types, in table order: rows are folded in memory as the text form of each value. */
const COLUMNS = [
  ['database_id', 'uuid'], ['item_key', 'text'], ['collection', 'text'], ['store', 'text'], ['item_id', 'text'], ['kind', 'text'],
  ['source_type', 'text'], ['title', 'text'], ['filename', 'text'], ['content_sha256', 'text'], ['content_type', 'text'], ['bytes', 'bigint'],
  ['pairs', 'boolean'], ['is_markdown', 'boolean'], ['infer', 'boolean'], ['custom_instructions', 'text'], ['user_name', 'text'],
  ['expires_at', 'timestamptz'], ['metadata', 'jsonb'], ['additional_metadata', 'jsonb'], ['relations', 'jsonb'], ['acl', 'jsonb'],
  ['app_kind', 'text'], ['app_provider', 'text'], ['content_version', 'integer'], ['ingest_position', 'bigint'], ['status', 'text'],
  ['error_code', 'text'], ['error_message', 'text'], ['chunks_sha256', 'text'], ['chunk_count', 'integer'], ['chunked_position', 'bigint'],
  ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'], ['searchable_at', 'timestamptz'], ['completed_at', 'timestamptz'],
  ['connector_id', 'uuid'], ['resource_id', 'text'], ['provider_permission', 'jsonb'], ['external_id', 'text'], ['source_content_hash', 'text'],
] as const;
type Column = (typeof COLUMNS)[number][0];
const KEY_COLUMNS: readonly Column[] = ['database_id', 'item_key'];
/** Each column's place in a Row. */
const C = Object.fromEntries(COLUMNS.map(([c], i) => [c, i])) as Record<Column, number>;

/**
 * A row as Postgres input text per column, in COLUMNS order (null = SQL NULL); every value is valid input for its
 * column's type. An array rather than an object keyed by column: a rebuild folds every item of the log through here,
 * and building and reading 41-property objects was most of its JavaScript time.
 */
type Row = (string | null)[];

const text = (v: unknown): string | null => (v === null || v === undefined ? null : typeof v === 'string' ? v : String(v));
const json = (v: unknown): string | null => text(JSON.stringify(v)); // JSON.stringify(undefined) is undefined: SQL NULL, as in apply

const LOAD = `SELECT ${COLUMNS.map(([c]) => `${c}::text AS ${c}`).join(', ')} FROM rm_items
  WHERE (database_id, item_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`;
const UPSERT = `INSERT INTO rm_items (${COLUMNS.map(([c]) => c).join(', ')})
  SELECT * FROM unnest(${COLUMNS.map(([, t], i) => `$${i + 1}::${t}[]`).join(', ')})
  ON CONFLICT (database_id, item_key) DO UPDATE SET ${COLUMNS.filter(([c]) => !KEY_COLUMNS.includes(c)).map(([c]) => `${c} = EXCLUDED.${c}`).join(', ')}`;
const DELETE = `DELETE FROM rm_items WHERE (database_id, item_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`;

const keyOf = (databaseId: string, itemKey: string) => `${databaseId.toLowerCase()}\u0000${itemKey}`;

/** The events `foldItems` folds onto an item's row: every handled one but the set-wide deletions. */
const ROW_EVENTS = ['ItemIngested', 'StatusAdvanced', 'ItemChunked', 'GraphExtracted', 'ItemDeleted', 'ItemMetadataUpdated', 'AclChanged', 'ProviderPermissionChanged'] as const;

/** Item events (no set-wide deletions) folded onto their rows in memory, then written back in three statements. */
async function foldItems(run: RecordedEvent[], sql: Sql): Promise<void> {
  const events = run.filter((e) => isEventOf(e, ROW_EVENTS));
  const keys = new Map<string, [string, string]>();
  for (const e of events) keys.set(keyOf(e.data.databaseId, e.data.itemKey), [e.data.databaseId, e.data.itemKey]);
  const ids = [...keys.values()];
  const loaded: Record<Column, string | null>[] = await sql.query(LOAD, [ids.map((k) => k[0]), ids.map((k) => k[1])]);
  const rows = new Map<string, Row>();
  for (const r of loaded) rows.set(keyOf(r.database_id!, r.item_key!), COLUMNS.map(([c]) => r[c]));
  const existed = new Set(rows.keys());
  const dirty = new Set<string>();

  for (const event of events) {
    const at = event.metadata.occurredAt;
    const key = keyOf(event.data.databaseId, event.data.itemKey);
    const row = rows.get(key);
    switch (event.type) {
      case 'ItemIngested': {
        const d = event.data;
        if (row && !(Number(row[C.ingest_position]) < event.position)) break;
        let next: Row;
        if (row) next = row.slice();
        else {
          next = new Array<string | null>(COLUMNS.length).fill(null);
          next[C.database_id] = d.databaseId;
          next[C.item_key] = d.itemKey;
          next[C.collection] = d.collection;
          next[C.store] = d.store;
          next[C.item_id] = d.itemId;
          next[C.created_at] = at;
        }
        next[C.kind] = d.kind;
        next[C.source_type] = d.sourceType;
        next[C.title] = text(d.title);
        next[C.filename] = text(d.content.filename);
        next[C.content_sha256] = d.content.sha256;
        next[C.content_type] = d.content.contentType;
        next[C.bytes] = text(d.content.bytes);
        next[C.pairs] = text(d.pairs);
        next[C.is_markdown] = text(d.isMarkdown);
        next[C.infer] = text(d.infer);
        next[C.custom_instructions] = text(d.customInstructions);
        next[C.user_name] = text(d.userName);
        next[C.expires_at] = text(storableExpiry(d.expiresAt));
        next[C.metadata] = json(d.metadata);
        next[C.additional_metadata] = json(d.additionalMetadata);
        next[C.relations] = json(d.relations);
        next[C.acl] = d.acl === undefined ? null : json(d.acl);
        next[C.app_kind] = text(d.appKind);
        next[C.app_provider] = text(d.appProvider);
        next[C.content_version] = text(event.revision);
        next[C.ingest_position] = text(event.position);
        next[C.status] = 'queued';
        next[C.error_code] = null;
        next[C.error_message] = null;
        next[C.chunks_sha256] = null;
        next[C.chunk_count] = '0';
        next[C.chunked_position] = null;
        next[C.updated_at] = at;
        next[C.searchable_at] = null;
        next[C.completed_at] = null;
        next[C.connector_id] = text(d.connector?.connectorId);
        next[C.resource_id] = text(d.connector?.resourceId);
        next[C.provider_permission] = d.connector?.permission ? json(d.connector.permission) : null;
        next[C.external_id] = text(d.connector?.externalId);
        next[C.source_content_hash] = text(d.connector?.contentHash);
        rows.set(key, next);
        dirty.add(key);
        break;
      }
      case 'StatusAdvanced': {
        const d = event.data;
        if (!row || Number(row[C.content_version]) !== Number(d.contentVersion)) break;
        row[C.status] = text(d.status);
        row[C.error_code] = text(d.errorCode);
        row[C.error_message] = text(d.message);
        row[C.updated_at] = at;
        if (d.status === 'graph_creation') row[C.searchable_at] = at;
        if (d.status === 'completed') row[C.completed_at] = at;
        dirty.add(key);
        break;
      }
      case 'ItemChunked': {
        const d = event.data;
        if (!row || Number(row[C.content_version]) !== Number(d.contentVersion)) break;
        row[C.chunks_sha256] = text(d.chunksSha256);
        row[C.chunk_count] = text(d.chunkCount);
        row[C.chunked_position] = text(event.position);
        row[C.updated_at] = at;
        if (row[C.status] === 'queued') row[C.status] = 'processing';
        dirty.add(key);
        break;
      }
      case 'GraphExtracted': {
        const d = event.data;
        if (!row || Number(row[C.content_version]) !== Number(d.contentVersion) || (row[C.status] !== 'queued' && row[C.status] !== 'processing')) break;
        row[C.status] = 'graph_creation';
        row[C.searchable_at] = at;
        row[C.updated_at] = at;
        dirty.add(key);
        break;
      }
      case 'ItemMetadataUpdated': {
        const d = event.data;
        if (!row) break;
        if (d.metadata !== undefined && json(d.metadata) !== null) row[C.metadata] = json(d.metadata);
        if (d.additionalMetadata !== undefined && json(d.additionalMetadata) !== null) row[C.additional_metadata] = json(d.additionalMetadata);
        if (d.title !== undefined) row[C.title] = text(d.title);
        row[C.updated_at] = at;
        dirty.add(key);
        break;
      }
      case 'AclChanged':
        if (!row) break;
        row[C.acl] = json(event.data.acl);
        row[C.updated_at] = at;
        dirty.add(key);
        break;
      case 'ProviderPermissionChanged':
        if (!row) break;
        row[C.provider_permission] = event.data.permission === null ? null : json(event.data.permission);
        row[C.updated_at] = at;
        dirty.add(key);
        break;
      case 'ItemDeleted':
        if (rows.delete(key)) dirty.add(key);
        break;
    }
  }

  const gone = [...dirty].filter((k) => existed.has(k) && !rows.has(k)).map((k) => keys.get(k)!);
  if (gone.length) await sql.query(DELETE, [gone.map((k) => k[0]), gone.map((k) => k[1])]);
  // In key order (neighbouring index pages; keys are distinct, so the order changes nothing else).
  const write = [...dirty].filter((k) => rows.has(k)).sort().map((k) => rows.get(k)!);
  if (write.length) await sql.query(UPSERT, COLUMNS.map((_, i) => write.map((r) => r[i])));
}
