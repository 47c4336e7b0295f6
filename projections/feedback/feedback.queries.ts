import type { Sql } from '@crs/persistence/data-source';

/** A row of rm_feedback: one feedback submission. */
export interface FeedbackRow {
  feedback_id: string;
  org_id: string;
  request_id: string;
  database_id: string | null;
  database_name: string | null;
  collection: string | null;
  feedback: string | null;
  rating: string | null;
  source: string;
  ground_truth_answer: string | null;
  ground_truth_source_ids: string[] | null;
  metadata: Record<string, string>;
  linked: boolean;
  query_database_id: string | null;
  actor: string;
  position: string;
  created_at: Date;
}

/** A submission as exported and evaluated: its database's name, and the linked query as recorded (text, type, mode, results). */
export type FeedbackWithQueryRow = Pick<
  FeedbackRow,
  'feedback_id' | 'request_id' | 'created_at' | 'database_name' | 'collection' | 'feedback' | 'rating' | 'source' | 'ground_truth_answer' | 'ground_truth_source_ids' | 'metadata' | 'linked'
> & {
  query: string | null;
  query_type: string | null;
  query_mode: string | null;
  results: { chunkId: string; itemId: string; score: number }[] | null;
};

/** An organization's submissions (about one database, since a time, when given) in the order they were recorded, with their linked queries. */
export function feedbackWithQueries(sql: Sql, orgId: string, opts: { databaseId?: string; since?: Date } = {}): Promise<FeedbackWithQueryRow[]> {
  return sql.query(
    `SELECT f.feedback_id, f.request_id, f.created_at, COALESCE(f.database_name, d.name) AS database_name, f.collection, f.feedback, f.rating,
              f.source, f.ground_truth_answer, f.ground_truth_source_ids, f.metadata, f.linked,
              q.query, q.type AS query_type, q.mode AS query_mode, q.results
       FROM rm_feedback f
       LEFT JOIN rm_queries q ON f.linked AND q.request_id = f.request_id
       LEFT JOIN rm_databases d ON d.id = COALESCE(f.database_id, f.query_database_id)
       WHERE f.org_id = $1
         AND ($2::uuid IS NULL OR f.database_id = $2 OR f.query_database_id = $2)
         AND ($3::timestamptz IS NULL OR f.created_at >= $3)
       ORDER BY f.created_at, f.position`,
    [orgId, opts.databaseId ?? null, opts.since?.toISOString() ?? null],
  );
}

/** The ids of the submissions about a database (its content or its queries), or about one of its collections. */
export function feedbackIdsOf(sql: Sql, databaseId: string, collection?: string): Promise<Pick<FeedbackRow, 'feedback_id'>[]> {
  return collection
    ? sql.query('SELECT feedback_id FROM rm_feedback WHERE database_id = $1 AND collection = $2', [databaseId, collection])
    : sql.query('SELECT feedback_id FROM rm_feedback WHERE database_id = $1 OR query_database_id = $1', [databaseId]);
}
