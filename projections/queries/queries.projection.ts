import type { RecordedEvent } from '../../libs/eventstore/src/event-store.port';
import type { Sql } from '../../libs/persistence/src/data-source';
import type { ReadModelProjection } from '../../libs/persistence/src/projection';
import type { QueryRecorded } from '../../libs/domain/src/query.events';

/** Recorded queries by request id: what feedback links to and its evaluation report scores. */
export const queriesProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'queries',
  tables: ['rm_queries'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS rm_queries (
      request_id uuid PRIMARY KEY,
      org_id text NOT NULL,
      database_id uuid NOT NULL,
      query text NOT NULL,
      type text NOT NULL,
      mode text NOT NULL,
      results jsonb NOT NULL,
      log_position bigint NOT NULL,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS rm_queries_database ON rm_queries (database_id, created_at)`,
  ],
  handles: ['QueryRecorded', 'DatabaseDeleted'],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    if (event.type === 'DatabaseDeleted') {
      await sql.query('DELETE FROM rm_queries WHERE database_id = $1', [event.data.databaseId]);
      return;
    }
    const d = (event as unknown as QueryRecorded).data;
    await sql.query(
      `INSERT INTO rm_queries (request_id, org_id, database_id, query, type, mode, results, log_position, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (request_id) DO NOTHING`,
      [d.requestId, event.metadata.orgId, d.databaseId, d.query, d.type, d.mode, JSON.stringify(d.results), d.logPosition, event.metadata.occurredAt],
    );
  },
};
