import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import type { ReadModelProjection } from '@crs/persistence/projection';

/**
 * One row per feedback submission (never replaced by a later one for the same query): what
 * `crs feedback export` and `crs feedback report` read. The link to the query was decided by the command
 * and recorded in the event, so a rebuild reproduces it without reading another read model.
 */
export const feedbackProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'feedback',
  tables: ['rm_feedback'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS rm_feedback (
      feedback_id uuid PRIMARY KEY,
      org_id text NOT NULL,
      request_id uuid NOT NULL,
      database_id uuid,
      database_name text,
      collection text,
      feedback text,
      rating text,
      source text NOT NULL,
      ground_truth_answer text,
      ground_truth_source_ids jsonb,
      metadata jsonb NOT NULL,
      linked boolean NOT NULL,
      query_database_id uuid,
      actor text NOT NULL,
      position bigint NOT NULL,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS rm_feedback_request ON rm_feedback (org_id, request_id)`,
    `CREATE INDEX IF NOT EXISTS rm_feedback_created ON rm_feedback (org_id, created_at, position)`,
  ],
  handles: ['FeedbackRecorded', 'DatabaseDeleted', 'CollectionDeleted'],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    if (event.type === 'DatabaseDeleted') {
      // Deletion is real: feedback about a deleted database's content goes with it.
      await sql.query('DELETE FROM rm_feedback WHERE database_id = $1 OR query_database_id = $1', [event.data.databaseId]);
      return;
    }
    if (event.type === 'CollectionDeleted') {
      await sql.query('DELETE FROM rm_feedback WHERE database_id = $1 AND collection = $2', [event.data.databaseId, event.data.collection]);
      return;
    }
    if (event.type !== 'FeedbackRecorded') return;
    const d = event.data;
    await sql.query(
      `INSERT INTO rm_feedback (feedback_id, org_id, request_id, database_id, database_name, collection, feedback, rating, source,
         ground_truth_answer, ground_truth_source_ids, metadata, linked, query_database_id, actor, position, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
       ON CONFLICT (feedback_id) DO NOTHING`,
      [
        d.feedbackId, event.metadata.orgId, d.requestId, d.databaseId, d.databaseName, d.collection, d.feedback, d.rating, d.source,
        d.groundTruth?.answer ?? null, d.groundTruth ? JSON.stringify(d.groundTruth.sourceIds) : null, JSON.stringify(d.metadata),
        d.linked, d.queryDatabaseId, event.metadata.actor, event.position, event.metadata.occurredAt,
      ],
    );
  },
};
