import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import { inSegments, type ReadModelProjection } from '@crs/persistence/projection';

/**
 * Which collection's items reference each blob (raw content, chunk lists, graphs, inferred facts): what a collection's
 * deletion may remove from disk. Blobs are content-addressed per database, so the same bytes ingested into two
 * collections are one file, removed only when the last collection referencing it goes (docs/databases.md).
 *
 * Every version's blob counts (events of earlier versions stay in the item's stream, and replays read them), and an
 * item deleted on its own keeps its rows until its collection goes, as its stream does. Events that name no collection
 * (ItemChunked, InferenceCompleted) take their item's from its ItemIngested, which precedes them in the log.
 */
export const blobRefsProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'blob-refs',
  tables: ['rm_blob_refs'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS rm_blob_refs (
      database_id uuid NOT NULL,
      item_key text NOT NULL,
      sha256 text NOT NULL,
      collection text NOT NULL,
      PRIMARY KEY (database_id, item_key, sha256)
    )`,
    `CREATE INDEX IF NOT EXISTS rm_blob_refs_sha ON rm_blob_refs (database_id, sha256)`,
    `CREATE INDEX IF NOT EXISTS rm_blob_refs_collection ON rm_blob_refs (database_id, collection)`,
  ],
  handles: ['ItemIngested', 'ItemChunked', 'GraphExtracted', 'InferenceCompleted', 'CollectionDeleted', 'DatabaseDeleted'],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    await applyRun([event], sql);
  },
  async applyBatch(events: RecordedEvent[], sql: Sql): Promise<void> {
    await inSegments(events, isDeletion, (run) => applyRun(run, sql), (e) => applyRun([e], sql));
  },
};

const isDeletion = (e: RecordedEvent) => e.type === 'CollectionDeleted' || e.type === 'DatabaseDeleted';

/** A run of reference events (an item's ItemIngested before its others), or one deletion. */
async function applyRun(events: RecordedEvent[], sql: Sql): Promise<void> {
  const named: [string, string, string, string][] = [];
  const unnamed: [string, string, string][] = [];
  // An item's collection from its events earlier in this run; otherwise from the table as it was before the run, so
  // the outcome is that of applying the events one by one (a key hashes its collection: every row agrees).
  const collectionOf = new Map<string, string>();
  const reference = (d: { databaseId: string; itemKey: string }, sha: string, collection?: string) => {
    const key = `${d.databaseId}/${d.itemKey}`;
    if (collection !== undefined) collectionOf.set(key, collection);
    const known = collectionOf.get(key);
    if (known !== undefined) named.push([d.databaseId, d.itemKey, sha, known]);
    else unnamed.push([d.databaseId, d.itemKey, sha]);
  };
  for (const e of events) {
    if (e.type === 'CollectionDeleted') await sql.query('DELETE FROM rm_blob_refs WHERE database_id = $1 AND collection = $2', [e.data.databaseId, e.data.collection]);
    else if (e.type === 'DatabaseDeleted') await sql.query('DELETE FROM rm_blob_refs WHERE database_id = $1', [e.data.databaseId]);
    else if (e.type === 'ItemIngested') reference(e.data, e.data.content.sha256, e.data.collection);
    else if (e.type === 'GraphExtracted') reference(e.data, e.data.graphSha256, e.data.collection);
    else if (e.type === 'ItemChunked') reference(e.data, e.data.chunksSha256);
    else if (e.type === 'InferenceCompleted') reference(e.data, e.data.factsSha256);
  }
  if (unnamed.length) {
    // Before the named ones: the table as it was before the run.
    await sql.query(
      `INSERT INTO rm_blob_refs (database_id, item_key, sha256, collection)
       SELECT u.d, u.k, u.s, c.collection FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(d, k, s)
       JOIN LATERAL (SELECT collection FROM rm_blob_refs r WHERE r.database_id = u.d AND r.item_key = u.k LIMIT 1) c ON true
       ON CONFLICT DO NOTHING`,
      [0, 1, 2].map((i) => unnamed.map((r) => r[i])),
    );
  }
  if (named.length) {
    await sql.query(
      `INSERT INTO rm_blob_refs (database_id, item_key, sha256, collection)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING`,
      [0, 1, 2, 3].map((i) => named.map((r) => r[i])),
    );
  }
}
