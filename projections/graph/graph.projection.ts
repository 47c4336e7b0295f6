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
        case 'ItemDeleted':
          // A new content version (or deletion) invalidates the item's graph rows.
          await sql.query('DELETE FROM rm_graph_mentions WHERE database_id = $1 AND item_key = $2', [d.databaseId, d.itemKey]);
          await sql.query('DELETE FROM rm_graph_relations WHERE database_id = $1 AND item_key = $2', [d.databaseId, d.itemKey]);
          return;
        case 'CollectionDeleted':
          await sql.query('DELETE FROM rm_graph_mentions WHERE database_id = $1 AND collection = $2', [d.databaseId, d.collection]);
          await sql.query('DELETE FROM rm_graph_relations WHERE database_id = $1 AND collection = $2', [d.databaseId, d.collection]);
          return;
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
          await sql.query('DELETE FROM rm_graph_mentions WHERE database_id = $1 AND item_key = $2', [d.databaseId, d.itemKey]);
          await sql.query('DELETE FROM rm_graph_relations WHERE database_id = $1 AND item_key = $2', [d.databaseId, d.itemKey]);
          if (graph.entities.length) {
            await sql.query(
              `INSERT INTO rm_graph_entities (database_id, entity_key, name, type)
               SELECT $1, k, n, t FROM unnest($2::text[], $3::text[], $4::text[]) AS u(k, n, t) ON CONFLICT DO NOTHING`,
              [d.databaseId, graph.entities.map((e) => e.key), graph.entities.map((e) => e.name), graph.entities.map((e) => e.type)],
            );
          }
          if (graph.mentions.length) {
            await sql.query(
              `INSERT INTO rm_graph_mentions (database_id, item_key, chunk_index, entity_key, collection)
               SELECT $1, $2, c, k, $5 FROM unnest($3::int[], $4::text[]) AS u(c, k) ON CONFLICT DO NOTHING`,
              [d.databaseId, d.itemKey, graph.mentions.map((m) => m.chunk), graph.mentions.map((m) => m.key), d.collection],
            );
          }
          if (graph.relations.length) {
            await sql.query(
              `INSERT INTO rm_graph_relations (database_id, item_key, chunk_index, source_key, target_key, predicate, context, collection)
               SELECT $1, $2, c, s, t, p, x, $8 FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[]) AS u(c, s, t, p, x) ON CONFLICT DO NOTHING`,
              [d.databaseId, d.itemKey, graph.relations.map((r) => r.chunk), graph.relations.map((r) => r.source), graph.relations.map((r) => r.target), graph.relations.map((r) => r.predicate), graph.relations.map((r) => r.context), d.collection],
            );
          }
          return;
        }
      }
    },
  };
}
