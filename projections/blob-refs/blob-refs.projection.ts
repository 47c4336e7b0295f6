import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import { inSegments, type ReadModelProjection } from '@crs/persistence/projection';
import { BlobStore } from '@crs/persistence/blob-store';

/**
 * Which collection's items reference each blob (raw content, chunk lists, graphs, inferred facts): what a collection's
 * deletion may remove from disk. Blobs are content-addressed per database, so the same bytes ingested into two
 * collections are one file, removed only when the last collection referencing it goes (docs/databases.md).
 *
 * Every version's blob counts (events of earlier versions stay in the item's stream, and replays read them), and an
 * item deleted on its own keeps its references until its collection goes, as its stream does. So what is kept is a
 * row per blob and collection referencing it (`rm_blob_refs`), however many items of the collection do, and a row per
 * item naming its collection (`rm_blob_ref_items`): events that name no collection (ItemChunked, InferenceCompleted)
 * take their item's from it, written by its ItemIngested, which precedes them in the log.
 *
 * A blob's sha256 (lowercase hex) is held as its 32 bytes (`decode(…, 'hex')`, read back with `encode`), an item key
 * (32 hex digits: `itemKey`) as the 16 bytes of a uuid.
 */
export const blobRefsProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'blob-refs',
  tables: ['rm_blob_refs', 'rm_blob_ref_items'],
  ddl: [
    // The key serves a blob's lookups (is it referenced, by another collection?); a collection's rows, read and removed
    // only when it is deleted, are found by the second index, whose one key per collection deduplicates to a few bytes
    // a row.
    `CREATE TABLE IF NOT EXISTS rm_blob_refs (
      database_id uuid NOT NULL,
      sha256 bytea NOT NULL,
      collection text NOT NULL,
      PRIMARY KEY (database_id, sha256, collection)
    )`,
    `CREATE INDEX IF NOT EXISTS rm_blob_refs_collection ON rm_blob_refs (database_id, collection)`,
    `CREATE TABLE IF NOT EXISTS rm_blob_ref_items (
      database_id uuid NOT NULL,
      item_key uuid NOT NULL,
      collection text NOT NULL,
      PRIMARY KEY (database_id, item_key)
    )`,
    `CREATE INDEX IF NOT EXISTS rm_blob_ref_items_collection ON rm_blob_ref_items (database_id, collection)`,
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

/** What `itemKey` makes: 32 hex digits, stored as a uuid. */
const ITEM_KEY = /^[0-9a-f]{32}$/;

/** A run of reference events (an item's ItemIngested before its others), or one deletion. */
async function applyRun(events: RecordedEvent[], sql: Sql): Promise<void> {
  const named: [string, string, string, string][] = [];
  const unnamed: [string, string, string][] = [];
  // An item's collection from its events earlier in this run; otherwise from the table as it was before the run, so
  // the outcome is that of applying the events one by one (a key hashes its collection: every event agrees).
  const collectionOf = new Map<string, string>();
  const reference = (d: { databaseId: string; itemKey: string }, sha: string, collection?: string) => {
    // Keys and hashes the service did not make (no blob is stored under them) are left out rather than let a cast stop
    // the projection.
    if (!ITEM_KEY.test(d.itemKey) || !BlobStore.isAddress(sha)) return;
    const key = `${d.databaseId}/${d.itemKey}`;
    if (collection !== undefined) collectionOf.set(key, collection);
    const known = collectionOf.get(key);
    if (known !== undefined) named.push([d.databaseId, d.itemKey, sha, known]);
    else unnamed.push([d.databaseId, d.itemKey, sha]);
  };
  for (const e of events) {
    if (e.type === 'CollectionDeleted') {
      await sql.query('DELETE FROM rm_blob_refs WHERE database_id = $1 AND collection = $2', [e.data.databaseId, e.data.collection]);
      await sql.query('DELETE FROM rm_blob_ref_items WHERE database_id = $1 AND collection = $2', [e.data.databaseId, e.data.collection]);
    } else if (e.type === 'DatabaseDeleted') {
      await sql.query('DELETE FROM rm_blob_refs WHERE database_id = $1', [e.data.databaseId]);
      await sql.query('DELETE FROM rm_blob_ref_items WHERE database_id = $1', [e.data.databaseId]);
    } else if (e.type === 'ItemIngested') reference(e.data, e.data.content.sha256, e.data.collection);
    else if (e.type === 'GraphExtracted') reference(e.data, e.data.graphSha256, e.data.collection);
    else if (e.type === 'ItemChunked') reference(e.data, e.data.chunksSha256);
    else if (e.type === 'InferenceCompleted') reference(e.data, e.data.factsSha256);
  }
  if (unnamed.length) {
    // Before the named ones: the table as it was before the run. An item whose collection is unknown (deleted since)
    // references nothing. One key lookup per event (the LIMIT keeps the planner from hashing every item instead).
    await sql.query(
      `INSERT INTO rm_blob_refs (database_id, sha256, collection)
       SELECT u.d, decode(u.s, 'hex'), i.collection FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS u(d, k, s)
       JOIN LATERAL (SELECT collection FROM rm_blob_ref_items i WHERE i.database_id = u.d AND i.item_key = u.k LIMIT 1) i ON true
       ON CONFLICT DO NOTHING`,
      [0, 1, 2].map((i) => unnamed.map((r) => r[i])),
    );
  }
  if (named.length) {
    await sql.query(
      `INSERT INTO rm_blob_ref_items (database_id, item_key, collection)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[]) ON CONFLICT DO NOTHING`,
      [0, 1, 3].map((i) => named.map((r) => r[i])),
    );
    await sql.query(
      `INSERT INTO rm_blob_refs (database_id, sha256, collection)
       SELECT d, decode(s, 'hex'), c FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(d, s, c) ON CONFLICT DO NOTHING`,
      [0, 2, 3].map((i) => named.map((r) => r[i])),
    );
  }
}
