import type { RecordedEvent } from '../../libs/eventstore/src/event-store.port';
import type { Sql } from '../../libs/persistence/src/data-source';
import type { ReadModelProjection } from '../../libs/persistence/src/projection';
import type { BlobStore } from '../../libs/persistence/src/blob-store';
import type { ExtractedGraph } from '../../libs/ingestion/src/graph/extract-graph';

export const GRAPH_TABLES = ['rm_graph_entities', 'rm_graph_mentions', 'rm_graph_relations'];

/**
 * The context graph per database: entities (one row per normalized name), which chunks mention them, and
 * relations between them with the sentence they came from. Built from GraphExtracted (the extraction result is
 * a content-addressed blob), so a rebuild never re-runs extraction. An item's rows are replaced per content
 * version and removed with the item, its collection or its database.
 */
export function graphProjection(blobs: BlobStore): ReadModelProjection {
  return {
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
      const d = event.data;
      switch (event.type) {
        case 'ItemIngested':
        case 'ItemDeleted': {
          // A new content version (or deletion) invalidates the item's graph rows.
          const keys = await removeItem(sql, d.databaseId, d.itemKey);
          await refreshEntities(sql, d.databaseId, keys);
          return;
        }
        case 'CollectionDeleted': {
          const rows: { k: string }[] = await sql.query('SELECT DISTINCT entity_key AS k FROM rm_graph_mentions WHERE database_id = $1 AND collection = $2', [d.databaseId, d.collection]);
          await sql.query('DELETE FROM rm_graph_mentions WHERE database_id = $1 AND collection = $2', [d.databaseId, d.collection]);
          await sql.query('DELETE FROM rm_graph_relations WHERE database_id = $1 AND collection = $2', [d.databaseId, d.collection]);
          await refreshEntities(sql, d.databaseId, rows.map((r) => r.k));
          return;
        }
        case 'DatabaseDeleted':
          for (const t of GRAPH_TABLES) await sql.query(`DELETE FROM ${t} WHERE database_id = $1`, [d.databaseId]);
          return;
        case 'GraphExtracted': {
          let graph: ExtractedGraph;
          try {
            graph = JSON.parse((await blobs.get(d.databaseId, d.graphSha256)).toString('utf8'));
          } catch {
            return; // the database (and its blobs) is gone: its DatabaseDeleted removes everything anyway
          }
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
  };
}

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
