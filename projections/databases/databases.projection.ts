import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import type { ReadModelProjection } from '@crs/persistence/projection';

/**
 * Databases and their collections, per organization: what `/databases*` and scope resolution read.
 * A deleted database or collection leaves no row (its audit record stays in the log).
 */
const COMPONENT_COLUMN: Record<string, string> = {
  scheduler: 'scheduler_ready',
  graph: 'graph_ready',
  'vectorstore.knowledge': 'vs_knowledge_ready',
  'vectorstore.memories': 'vs_memories_ready',
};

export const databasesProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'databases',
  tables: ['rm_databases', 'rm_collections'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS rm_databases (
      id uuid PRIMARY KEY,
      org_id text NOT NULL,
      name text NOT NULL,
      status text NOT NULL,
      metadata_schema jsonb NOT NULL,
      embedder jsonb NOT NULL,
      scheduler_ready boolean NOT NULL DEFAULT false,
      graph_ready boolean NOT NULL DEFAULT false,
      vs_knowledge_ready boolean NOT NULL DEFAULT false,
      vs_memories_ready boolean NOT NULL DEFAULT false,
      created_by text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE UNIQUE INDEX IF NOT EXISTS rm_databases_org_name ON rm_databases (org_id, name)`,
    `CREATE TABLE IF NOT EXISTS rm_collections (
      database_id uuid NOT NULL,
      name text NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (database_id, name)
    )`,
  ],
  handles: [
    'DatabaseCreated',
    'DatabaseComponentProvisioned',
    'DatabaseEmbedderChanged',
    'DatabaseDeletionRequested',
    'DatabaseDeleted',
    'CollectionCreated',
    'CollectionDeletionRequested',
    'CollectionDeleted',
  ],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    const at = event.metadata.occurredAt;
    switch (event.type) {
      case 'DatabaseCreated':
        await sql.query(
          `INSERT INTO rm_databases (id, org_id, name, status, metadata_schema, embedder, created_by, created_at, updated_at)
           VALUES ($1, $2, $3, 'provisioning', $4, $5, $6, $7, $7) ON CONFLICT (id) DO NOTHING`,
          [event.data.databaseId, event.metadata.orgId, event.data.name, JSON.stringify(event.data.metadataSchema), JSON.stringify(event.data.embedder), event.metadata.actor, at],
        );
        return;
      case 'DatabaseComponentProvisioned': {
        const column = COMPONENT_COLUMN[event.data.component];
        await sql.query(
          `UPDATE rm_databases SET ${column} = true, updated_at = $2,
             status = CASE WHEN status = 'provisioning' AND (scheduler_ready OR $3 = 'scheduler_ready') AND (graph_ready OR $3 = 'graph_ready')
                          AND (vs_knowledge_ready OR $3 = 'vs_knowledge_ready') AND (vs_memories_ready OR $3 = 'vs_memories_ready')
                      THEN 'ready' ELSE status END
           WHERE id = $1`,
          [event.data.databaseId, at, column],
        );
        return;
      }
      case 'DatabaseEmbedderChanged':
        await sql.query(`UPDATE rm_databases SET embedder = $2, updated_at = $3 WHERE id = $1`, [event.data.databaseId, JSON.stringify(event.data.embedder), at]);
        return;
      case 'DatabaseDeletionRequested':
        await sql.query(`UPDATE rm_databases SET status = 'deleting', updated_at = $2 WHERE id = $1`, [event.data.databaseId, at]);
        await sql.query(`UPDATE rm_collections SET status = 'deleting', updated_at = $2 WHERE database_id = $1`, [event.data.databaseId, at]);
        return;
      case 'DatabaseDeleted':
        await sql.query(`DELETE FROM rm_collections WHERE database_id = $1`, [event.data.databaseId]);
        await sql.query(`DELETE FROM rm_databases WHERE id = $1`, [event.data.databaseId]);
        return;
      case 'CollectionCreated':
        await sql.query(
          `INSERT INTO rm_collections (database_id, name, status, created_at, updated_at) VALUES ($1, $2, 'active', $3, $3)
           ON CONFLICT (database_id, name) DO NOTHING`,
          [event.data.databaseId, event.data.collection, at],
        );
        return;
      case 'CollectionDeletionRequested':
        await sql.query(`UPDATE rm_collections SET status = 'deleting', updated_at = $3 WHERE database_id = $1 AND name = $2`, [event.data.databaseId, event.data.collection, at]);
        return;
      case 'CollectionDeleted':
        await sql.query(`DELETE FROM rm_collections WHERE database_id = $1 AND name = $2`, [event.data.databaseId, event.data.collection]);
        return;
    }
  },
};
