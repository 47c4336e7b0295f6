import type { RecordedEvent } from '../../libs/eventstore/src/event-store.port';
import type { Sql } from '../../libs/persistence/src/data-source';
import type { ReadModelProjection } from '../../libs/persistence/src/projection';
import type { ItemEvent } from '../../libs/domain/src/items/item.events';

/**
 * Every ingested item (memory, file, app item) with its indexing status: what /context/status, /context/list,
 * stats, the pipeline's work queue and the query path's authoritative check (status, expiry, ACL) read.
 */
export const itemsProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'items',
  tables: ['rm_items'],
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
      PRIMARY KEY (database_id, item_key)
    )`,
    `CREATE INDEX IF NOT EXISTS rm_items_pending ON rm_items (ingest_position) WHERE status IN ('queued', 'processing')`,
    `CREATE INDEX IF NOT EXISTS rm_items_lookup ON rm_items (database_id, item_id)`,
    `CREATE INDEX IF NOT EXISTS rm_items_collection ON rm_items (database_id, collection, store, created_at)`,
  ],
  handles: ['ItemIngested', 'StatusAdvanced', 'ItemChunked', 'ItemDeleted', 'ItemMetadataUpdated', 'AclChanged', 'DatabaseDeleted', 'CollectionDeleted'],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    const e = event as unknown as ItemEvent & RecordedEvent;
    const at = event.metadata.occurredAt;
    switch (e.type) {
      case 'ItemIngested': {
        const d = e.data;
        // Upsert: a new content version replaces the row; created_at survives the replacement.
        await sql.query(
          `INSERT INTO rm_items (database_id, item_key, collection, store, item_id, kind, source_type, title, filename, content_sha256, content_type, bytes,
             pairs, is_markdown, infer, custom_instructions, user_name, expires_at, metadata, additional_metadata, relations, acl, app_kind, app_provider,
             content_version, ingest_position, status, created_at, updated_at)
           VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,'queued',$27,$27)
           ON CONFLICT (database_id, item_key) DO UPDATE SET
             kind = EXCLUDED.kind, source_type = EXCLUDED.source_type, title = EXCLUDED.title, filename = EXCLUDED.filename,
             content_sha256 = EXCLUDED.content_sha256, content_type = EXCLUDED.content_type, bytes = EXCLUDED.bytes, pairs = EXCLUDED.pairs,
             is_markdown = EXCLUDED.is_markdown, infer = EXCLUDED.infer, custom_instructions = EXCLUDED.custom_instructions, user_name = EXCLUDED.user_name,
             expires_at = EXCLUDED.expires_at, metadata = EXCLUDED.metadata, additional_metadata = EXCLUDED.additional_metadata, relations = EXCLUDED.relations,
             acl = EXCLUDED.acl, app_kind = EXCLUDED.app_kind, app_provider = EXCLUDED.app_provider, content_version = EXCLUDED.content_version,
             ingest_position = EXCLUDED.ingest_position, status = 'queued', error_code = NULL, error_message = NULL, chunks_sha256 = NULL, chunk_count = 0,
             chunked_position = NULL, updated_at = EXCLUDED.updated_at, searchable_at = NULL, completed_at = NULL
           WHERE rm_items.ingest_position < EXCLUDED.ingest_position`,
          [
            d.databaseId, d.itemKey, d.collection, d.store, d.itemId, d.kind, d.sourceType, d.title, d.content.filename ?? null, d.content.sha256, d.content.contentType,
            d.content.bytes, d.pairs, d.isMarkdown, d.infer, d.customInstructions, d.userName, d.expiresAt, JSON.stringify(d.metadata), JSON.stringify(d.additionalMetadata),
            JSON.stringify(d.relations), d.acl === undefined ? null : JSON.stringify(d.acl), d.appKind ?? null, d.appProvider ?? null, event.revision, event.position, at,
          ],
        );
        return;
      }
      case 'StatusAdvanced': {
        const d = e.data;
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
        const d = e.data;
        await sql.query(
          `UPDATE rm_items SET chunks_sha256 = $4, chunk_count = $5, chunked_position = $6, updated_at = $7
           WHERE database_id = $1 AND item_key = $2 AND content_version = $3`,
          [d.databaseId, d.itemKey, d.contentVersion, d.chunksSha256, d.chunkCount, event.position, at],
        );
        return;
      }
      case 'ItemMetadataUpdated': {
        const d = e.data;
        await sql.query(
          `UPDATE rm_items SET metadata = COALESCE($3, metadata), additional_metadata = COALESCE($4, additional_metadata),
             title = CASE WHEN $5 THEN $6 ELSE title END, updated_at = $7
           WHERE database_id = $1 AND item_key = $2`,
          [d.databaseId, d.itemKey, d.metadata === undefined ? null : JSON.stringify(d.metadata), d.additionalMetadata === undefined ? null : JSON.stringify(d.additionalMetadata), d.title !== undefined, d.title ?? null, at],
        );
        return;
      }
      case 'AclChanged':
        await sql.query(`UPDATE rm_items SET acl = $3, updated_at = $4 WHERE database_id = $1 AND item_key = $2`, [e.data.databaseId, e.data.itemKey, JSON.stringify(e.data.acl), at]);
        return;
      case 'ItemDeleted':
        await sql.query(`DELETE FROM rm_items WHERE database_id = $1 AND item_key = $2`, [e.data.databaseId, e.data.itemKey]);
        return;
    }
    const other = event as RecordedEvent;
    if (other.type === 'DatabaseDeleted') await sql.query(`DELETE FROM rm_items WHERE database_id = $1`, [other.data.databaseId]);
    if (other.type === 'CollectionDeleted') await sql.query(`DELETE FROM rm_items WHERE database_id = $1 AND collection = $2`, [other.data.databaseId, other.data.collection]);
  },
};
