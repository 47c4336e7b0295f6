import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import { inSegments, type ReadModelProjection } from '@crs/persistence/projection';
import type { QueryRecorded } from '@crs/domain/query.events';
import { ONLY_IN_COLLECTION } from './queries.queries';

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
      collections text[],
      log_position bigint NOT NULL,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS rm_queries_database ON rm_queries (database_id, created_at)`,
  ],
  handles: ['QueryRecorded', 'DatabaseDeleted', 'CollectionDeleted'],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    if (event.type === 'DatabaseDeleted') {
      await sql.query('DELETE FROM rm_queries WHERE database_id = $1', [event.data.databaseId]);
      return;
    }
    if (event.type === 'CollectionDeleted') {
      // The queries asked of that collection alone went with it (their streams were deleted: onlyIn).
      await sql.query(`DELETE FROM rm_queries WHERE database_id = $1 AND ${ONLY_IN_COLLECTION}`, [event.data.databaseId, event.data.collection]);
      return;
    }
    if (event.type !== 'QueryRecorded') return;
    const d = event.data;
    await sql.query(
      `INSERT INTO rm_queries (request_id, org_id, database_id, query, type, mode, results, collections, log_position, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (request_id) DO NOTHING`,
      [d.requestId, event.metadata.orgId, d.databaseId, d.query, d.type, d.mode, JSON.stringify(d.results), d.collections ?? null, d.logPosition, event.metadata.occurredAt],
    );
  },
  /** A page at once: one multi-row insert per run of QueryRecorded (the first of a request id wins, as in apply); deletions on their own. */
  async applyBatch(events: RecordedEvent[], sql: Sql): Promise<void> {
    await inSegments(
      events,
      (e) => e.type === 'DatabaseDeleted' || e.type === 'CollectionDeleted',
      async (run) => {
        const seen = new Set<string>();
        const rows: RecordedEvent<QueryRecorded>[] = [];
        for (const e of run) {
          if (e.type !== 'QueryRecorded') continue;
          const id = String(e.data.requestId).toLowerCase();
          if (seen.has(id)) continue;
          seen.add(id);
          rows.push(e);
        }
        const col = (f: (e: RecordedEvent<QueryRecorded>, d: QueryRecorded['data']) => unknown) => rows.map((e) => f(e, e.data) ?? null);
        await sql.query(
          `INSERT INTO rm_queries (request_id, org_id, database_id, query, type, mode, results, collections, log_position, created_at)
           SELECT u.r, u.o, u.d, u.q, u.t, u.m, u.res, CASE WHEN u.c IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(u.c)) END, u.p, u.at
           FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::jsonb[], $8::jsonb[], $9::bigint[], $10::timestamptz[])
             AS u(r, o, d, q, t, m, res, c, p, at)
           ON CONFLICT (request_id) DO NOTHING`,
          [
            col((_, d) => d.requestId), col((e) => e.metadata.orgId), col((_, d) => d.databaseId), col((_, d) => d.query), col((_, d) => d.type),
            col((_, d) => d.mode), col((_, d) => JSON.stringify(d.results)), col((_, d) => (d.collections ? JSON.stringify(d.collections) : null)),
            col((_, d) => d.logPosition), col((e) => e.metadata.occurredAt),
          ],
        );
      },
      (e) => queriesProjection.apply(e, sql),
    );
  },
};
