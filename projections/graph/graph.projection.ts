import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import { inSegments, type ReadModelProjection } from '@crs/persistence/projection';
import { BlobStore } from '@crs/persistence/blob-store';
import type { ExtractedGraph } from '@crs/ingestion/graph/extract-graph';
import { isEventOf } from '@crs/domain/domain-event';

export const GRAPH_TABLES = ['rm_graph_entities', 'rm_graph_mentions', 'rm_graph_relations'];

/**
 * The context graph per database: entities (one row per normalized name), which chunks mention them, and
 * relations between them with the sentence they came from. Built from GraphExtracted (the extraction result is
 * a content-addressed blob), so a rebuild never re-runs extraction. An item's rows are replaced per content
 * version and removed with the item, its collection or its database.
 */
export function graphProjection(blobs: BlobStore): ReadModelProjection {
  const projection: ReadModelProjection = {
    kind: 'read-model',
    name: 'graph',
    tables: GRAPH_TABLES,
    ddl: [
      `CREATE TABLE IF NOT EXISTS rm_graph_entities (
        database_id uuid NOT NULL, entity_key text NOT NULL, name text NOT NULL, type text NOT NULL,
        PRIMARY KEY (database_id, entity_key))`,
      `CREATE TABLE IF NOT EXISTS rm_graph_mentions (
        database_id uuid NOT NULL, item_key text NOT NULL, chunk_index integer NOT NULL, entity_key text NOT NULL, collection text NOT NULL,
        name text NOT NULL, type text NOT NULL,
        PRIMARY KEY (database_id, item_key, chunk_index, entity_key))`,
      `CREATE INDEX IF NOT EXISTS rm_graph_mentions_entity ON rm_graph_mentions (database_id, entity_key)`,
      `CREATE TABLE IF NOT EXISTS rm_graph_relations (
        database_id uuid NOT NULL, item_key text NOT NULL, chunk_index integer NOT NULL, source_key text NOT NULL, target_key text NOT NULL,
        predicate text NOT NULL, context text NOT NULL, collection text NOT NULL,
        PRIMARY KEY (database_id, item_key, chunk_index, source_key, target_key, predicate))`,
      `CREATE INDEX IF NOT EXISTS rm_graph_relations_source ON rm_graph_relations (database_id, source_key)`,
      `CREATE INDEX IF NOT EXISTS rm_graph_relations_target ON rm_graph_relations (database_id, target_key)`,
    ],
    handles: ['GraphExtracted', 'ItemIngested', 'ItemDeleted', 'CollectionDeleted', 'DatabaseDeleted'],
    async apply(event: RecordedEvent, sql: Sql): Promise<void> {
      switch (event.type) {
        case 'ItemIngested':
        case 'ItemDeleted': {
          const d = event.data;
          // A new content version (or deletion) invalidates the item's graph rows.
          const keys = await removeItem(sql, d.databaseId, d.itemKey);
          await refreshEntities(sql, d.databaseId, keys);
          return;
        }
        case 'CollectionDeleted': {
          const d = event.data;
          const rows: { k: string }[] = await sql.query('SELECT DISTINCT entity_key AS k FROM rm_graph_mentions WHERE database_id = $1 AND collection = $2', [d.databaseId, d.collection]);
          await sql.query('DELETE FROM rm_graph_mentions WHERE database_id = $1 AND collection = $2', [d.databaseId, d.collection]);
          await sql.query('DELETE FROM rm_graph_relations WHERE database_id = $1 AND collection = $2', [d.databaseId, d.collection]);
          await refreshEntities(sql, d.databaseId, rows.map((r) => r.k));
          return;
        }
        case 'DatabaseDeleted':
          for (const t of GRAPH_TABLES) await sql.query(`DELETE FROM ${t} WHERE database_id = $1`, [event.data.databaseId]);
          return;
        case 'GraphExtracted': {
          const d = event.data;
          const [graph] = await readGraphs(blobs, [d]);
          if (!graph) return; // the database (and its blobs) is gone: its DatabaseDeleted removes everything anyway
          const old = await removeItem(sql, d.databaseId, d.itemKey);
          const entity = new Map(graph.entities.map((e) => [e.key, e]));
          const mentions = graph.mentions.filter((m) => entity.has(m.key));
          if (mentions.length) {
            await sql.query(
              `INSERT INTO rm_graph_mentions (database_id, item_key, chunk_index, entity_key, collection, name, type)
               SELECT $1, $2, c, k, $5, n, t FROM unnest($3::int[], $4::text[], $6::text[], $7::text[]) AS u(c, k, n, t) ON CONFLICT DO NOTHING`,
              [d.databaseId, d.itemKey, mentions.map((m) => m.chunk), mentions.map((m) => m.key), d.collection, mentions.map((m) => entity.get(m.key)!.name), mentions.map((m) => entity.get(m.key)!.type)],
            );
          }
          if (graph.relations.length) {
            await sql.query(
              `INSERT INTO rm_graph_relations (database_id, item_key, chunk_index, source_key, target_key, predicate, context, collection)
               SELECT $1, $2, c, s, t, p, x, $8 FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[]) AS u(c, s, t, p, x) ON CONFLICT DO NOTHING`,
              [d.databaseId, d.itemKey, graph.relations.map((r) => r.chunk), graph.relations.map((r) => r.source), graph.relations.map((r) => r.target), graph.relations.map((r) => r.predicate), graph.relations.map((r) => r.context), d.collection],
            );
          }
          await refreshEntities(sql, d.databaseId, [...new Set([...old, ...mentions.map((m) => m.key)])]);
          return;
        }
      }
    },
    /**
     * A page at once. Every item event replaces the item's rows wholesale (ItemIngested and ItemDeleted with
     * nothing, GraphExtracted with its graph), so within a run only each item's last effective event counts: the
     * items' rows are deleted in one statement, the surviving graphs inserted in one per table (same rows; of
     * duplicates within a graph the first is kept, as `apply`'s ON CONFLICT DO NOTHING keeps it), and the entities of every key the run touched are
     * re-derived once from the mentions (a pure function of them, so once at the end equals once per event).
     * Collection and database deletions run on their own, between the runs.
     */
    async applyBatch(events: RecordedEvent[], sql: Sql): Promise<void> {
      await inSegments(
        events,
        (e) => e.type === 'CollectionDeleted' || e.type === 'DatabaseDeleted',
        (run) => foldGraph(blobs, run, sql),
        (e) => projection.apply(e, sql),
      );
    },
  };
  return projection;
}

/**
 * Extraction results, in one blob read: null for one that is not stored (its database or collection deleted since; its
 * deletion event removes the rows anyway), not a valid blob address or not a graph. Any other failure (Postgres, the
 * file system) is thrown, so the batch is retried rather than left without the item's graph.
 */
async function readGraphs(blobs: BlobStore, refs: { databaseId: string; graphSha256: string }[]): Promise<(ExtractedGraph | null)[]> {
  const valid = refs.map((r) => BlobStore.isAddress(r.graphSha256));
  const bytes = await blobs.getMany(refs.filter((_, i) => valid[i]).map((r) => ({ databaseId: r.databaseId, sha256: r.graphSha256 })));
  let at = 0;
  return refs.map((_, i) => {
    const stored = valid[i] ? bytes[at++] : null;
    if (!stored) return null;
    try {
      return JSON.parse(stored.toString('utf8')) as ExtractedGraph;
    } catch {
      return null;
    }
  });
}

/** What a run leaves an item with: nothing, or one extraction result. */
type ItemGraph = { databaseId: string; itemKey: string; collection: string; graph: ExtractedGraph } | { databaseId: string; itemKey: string; graph: null };

/** The events `foldGraph` folds onto an item's rows: every handled one but the set-wide deletions. */
const ITEM_EVENTS = ['GraphExtracted', 'ItemIngested', 'ItemDeleted'] as const;

async function foldGraph(blobs: BlobStore, run: RecordedEvent[], sql: Sql): Promise<void> {
  const events = run.filter((e) => isEventOf(e, ITEM_EVENTS));
  // Extraction results, all of the run's in one read (a missing blob makes its event a no-op, as in apply).
  const extracted = events.filter((e) => e.type === 'GraphExtracted');
  const read = await readGraphs(blobs, extracted.map((e) => e.data));
  const byEvent = new Map(extracted.map((e, i) => [e, read[i]]));
  const graphs = events.map((e) => (e.type === 'GraphExtracted' ? byEvent.get(e)! : undefined));
  const final = new Map<string, ItemGraph>();
  events.forEach((e, i) => {
    const d = e.data;
    const key = `${String(d.databaseId).toLowerCase()}\u0000${d.itemKey}`;
    if (e.type === 'GraphExtracted') {
      const graph = graphs[i];
      if (!graph) return;
      final.delete(key); // keep the map in order of each item's last effective event
      final.set(key, { databaseId: d.databaseId, itemKey: d.itemKey, collection: d.collection, graph });
    } else {
      final.delete(key);
      final.set(key, { databaseId: d.databaseId, itemKey: d.itemKey, graph: null });
    }
  });
  if (!final.size) return;
  // In key order: rows of neighbouring items land on neighbouring index pages (about a third faster to insert than
  // in log order). Items never share a primary key, so the order changes nothing else.
  const items = [...final.values()].sort((a, b) => cmp(a.databaseId, b.databaseId) || cmp(a.itemKey, b.itemKey));
  const itemDbs = items.map((x) => x.databaseId);
  const itemKeys = items.map((x) => x.itemKey);
  const ITEMS = 'SELECT * FROM unnest($1::uuid[], $2::text[])';

  // The items' rows go, in one statement that returns the entity keys they mentioned (their entities must be
  // re-derived after the delete): one pass over the keys instead of a read and two deletes.
  const old: { d: string; k: string }[] = await sql.query(
    `WITH keys AS (${ITEMS}),
       mentions AS (DELETE FROM rm_graph_mentions WHERE (database_id, item_key) IN (SELECT * FROM keys) RETURNING database_id, entity_key),
       relations AS (DELETE FROM rm_graph_relations WHERE (database_id, item_key) IN (SELECT * FROM keys))
     SELECT DISTINCT database_id::text AS d, entity_key AS k FROM mentions`,
    [itemDbs, itemKeys],
  );

  const m = { db: [] as string[], item: [] as string[], chunk: [] as number[], key: [] as string[], coll: [] as string[], name: [] as string[], type: [] as string[] };
  const r = { db: [] as string[], item: [] as string[], chunk: [] as number[], source: [] as string[], target: [] as string[], predicate: [] as string[], context: [] as string[], coll: [] as string[] };
  const touched = new Map<string, [string, string]>();
  for (const o of old) touched.set(`${o.d}\u0000${o.k}`, [o.d, o.k]);
  // Keys of graphs a later event of the run replaced too: apply would have re-derived them twice on the way.
  events.forEach((e, i) => {
    for (const mention of graphs[i]?.mentions ?? []) touched.set(`${String(e.data.databaseId).toLowerCase()}\u0000${mention.key}`, [e.data.databaseId, mention.key]);
  });
  for (const x of items) {
    if (!x.graph) continue;
    const entity = new Map(x.graph.entities.map((e) => [e.key, e]));
    // The item's rows were just deleted and items never share a primary key, so the only conflicts are duplicates
    // within the graph: the first one stays, as with apply's ON CONFLICT DO NOTHING, and the inserts need no conflict check.
    const seenMentions = new Set<string>();
    const seenRelations = new Set<string>();
    for (const mention of x.graph.mentions) {
      const e = entity.get(mention.key);
      if (!e) continue;
      const pk = `${Number(mention.chunk)}\u0000${mention.key}`;
      if (seenMentions.has(pk)) continue;
      seenMentions.add(pk);
      m.db.push(x.databaseId), m.item.push(x.itemKey), m.chunk.push(mention.chunk), m.key.push(mention.key), m.coll.push(x.collection), m.name.push(e.name), m.type.push(e.type);
      touched.set(`${x.databaseId.toLowerCase()}\u0000${mention.key}`, [x.databaseId, mention.key]);
    }
    for (const rel of x.graph.relations) {
      const pk = `${Number(rel.chunk)}\u0000${rel.source}\u0000${rel.target}\u0000${rel.predicate}`;
      if (seenRelations.has(pk)) continue;
      seenRelations.add(pk);
      r.db.push(x.databaseId), r.item.push(x.itemKey), r.chunk.push(rel.chunk), r.source.push(rel.source), r.target.push(rel.target), r.predicate.push(rel.predicate), r.context.push(rel.context), r.coll.push(x.collection);
    }
  }
  if (m.db.length) {
    await sql.query(
      `INSERT INTO rm_graph_mentions (database_id, item_key, chunk_index, entity_key, collection, name, type)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[])`,
      [m.db, m.item, m.chunk, m.key, m.coll, m.name, m.type],
    );
  }
  if (r.db.length) {
    await sql.query(
      `INSERT INTO rm_graph_relations (database_id, item_key, chunk_index, source_key, target_key, predicate, context, collection)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])`,
      [r.db, r.item, r.chunk, r.source, r.target, r.predicate, r.context, r.coll],
    );
  }
  // Entities are a pure function of the mentions: min(name), and the least type other than 'concept' (else
  // 'concept'). A key that lost mentions in this run is derived again from all of its mentions; a key that only
  // gained some folds the new ones into its row (both are minimums, so adding is exact), instead of re-reading
  // every mention of a common entity on every page: that grew with the corpus (graph.wait_graph at 100k).
  // A key only a replaced graph of the run mentioned gained and lost nothing: its row is already right.
  const lost = new Set(old.map((o) => `${o.d}\u0000${o.k}`));
  const rederive = [...touched.entries()].filter(([k]) => lost.has(k)).map(([, v]) => v);
  if (rederive.length) {
    const KEYS = 'SELECT * FROM unnest($1::uuid[], $2::text[])';
    const params = [rederive.map((k) => k[0]), rederive.map((k) => k[1])];
    await sql.query(`DELETE FROM rm_graph_entities WHERE (database_id, entity_key) IN (${KEYS})`, params);
    await sql.query(
      `INSERT INTO rm_graph_entities (database_id, entity_key, name, type)
       SELECT database_id, entity_key, min(name), coalesce(min(type) FILTER (WHERE type <> 'concept'), 'concept')
       FROM rm_graph_mentions WHERE (database_id, entity_key) IN (${KEYS}) GROUP BY database_id, entity_key`,
      params,
    );
  }
  const gained = m.db.map((_, i) => i).filter((i) => !lost.has(`${m.db[i].toLowerCase()}\u0000${m.key[i]}`));
  if (gained.length) {
    await sql.query(
      `INSERT INTO rm_graph_entities AS e (database_id, entity_key, name, type)
       SELECT database_id, entity_key, min(name), coalesce(min(type) FILTER (WHERE type <> 'concept'), 'concept')
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS u(database_id, entity_key, name, type) GROUP BY database_id, entity_key
       ON CONFLICT (database_id, entity_key) DO UPDATE SET
         name = LEAST(e.name, EXCLUDED.name),
         type = CASE WHEN e.type = 'concept' THEN EXCLUDED.type WHEN EXCLUDED.type = 'concept' THEN e.type ELSE LEAST(e.type, EXCLUDED.type) END
       WHERE EXCLUDED.name < e.name OR (EXCLUDED.type <> 'concept' AND (e.type = 'concept' OR EXCLUDED.type < e.type))`,
      [gained.map((i) => m.db[i]), gained.map((i) => m.key[i]), gained.map((i) => m.name[i]), gained.map((i) => m.type[i])],
    );
  }
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Removes an item's mentions and relations; returns the entity keys it mentioned. */
async function removeItem(sql: Sql, databaseId: string, itemKey: string): Promise<string[]> {
  const rows: { k: string }[] = await sql.query('SELECT DISTINCT entity_key AS k FROM rm_graph_mentions WHERE database_id = $1 AND item_key = $2', [databaseId, itemKey]);
  await sql.query('DELETE FROM rm_graph_mentions WHERE database_id = $1 AND item_key = $2', [databaseId, itemKey]);
  await sql.query('DELETE FROM rm_graph_relations WHERE database_id = $1 AND item_key = $2', [databaseId, itemKey]);
  return rows.map((r) => r.k);
}

/**
 * Entities are derived from the mentions that exist now (never from history): an entity nobody mentions any more
 * disappears with the content it came from, and its name and type are the same whatever order things happened in.
 */
async function refreshEntities(sql: Sql, databaseId: string, keys: string[]): Promise<void> {
  if (!keys.length) return;
  await sql.query('DELETE FROM rm_graph_entities WHERE database_id = $1 AND entity_key = ANY($2)', [databaseId, keys]);
  await sql.query(
    `INSERT INTO rm_graph_entities (database_id, entity_key, name, type)
     SELECT database_id, entity_key, min(name), coalesce(min(type) FILTER (WHERE type <> 'concept'), 'concept')
     FROM rm_graph_mentions WHERE database_id = $1 AND entity_key = ANY($2) GROUP BY database_id, entity_key`,
    [databaseId, keys],
  );
}
