import type { Sql } from '@crs/persistence/data-source';

/** A row of rm_queries: a recorded query and the results it returned. */
export interface QueryRow {
  request_id: string;
  org_id: string;
  database_id: string;
  query: string;
  type: string;
  mode: string;
  results: { chunkId: string; itemId: string; score: number }[];
  collections: string[] | null;
  log_position: string;
  created_at: Date;
}

/** A query scoped to one collection only (`$2`): its record goes with that collection. */
export const ONLY_IN_COLLECTION = 'collections IS NOT NULL AND cardinality(collections) > 0 AND collections <@ ARRAY[$2]::text[]';

/** The request ids of a database's recorded queries, or of those asked of one of its collections alone. */
export function requestIdsOf(sql: Sql, databaseId: string, collection?: string): Promise<Pick<QueryRow, 'request_id'>[]> {
  return collection === undefined
    ? sql.query('SELECT request_id FROM rm_queries WHERE database_id = $1', [databaseId])
    : sql.query(`SELECT request_id FROM rm_queries WHERE database_id = $1 AND ${ONLY_IN_COLLECTION}`, [databaseId, collection]);
}

/** The recorded query of an organization with this request id, with its database's name, unless that database is being deleted. */
export function findRecordedQuery(sql: Sql, requestId: string, orgId: string): Promise<{ database_id: string; name: string }[]> {
  return sql.query(
    `SELECT q.database_id, d.name FROM rm_queries q JOIN rm_databases d ON d.id = q.database_id
       WHERE q.request_id = $1 AND q.org_id = $2 AND d.status <> 'deleting'`,
    [requestId, orgId],
  );
}

/** Up to `limit` recorded queries asked before `cutoff` that no feedback links to, oldest first. */
export function queriesPastRetention(sql: Sql, cutoff: Date, limit: number): Promise<Pick<QueryRow, 'request_id' | 'database_id'>[]> {
  return sql.query(
    `SELECT q.request_id, q.database_id FROM rm_queries q
             WHERE q.created_at < $1
               AND NOT EXISTS (SELECT 1 FROM rm_feedback f WHERE f.org_id = q.org_id AND f.request_id = q.request_id)
             ORDER BY q.created_at LIMIT $2`,
    [cutoff, limit],
  );
}

/**
 * Removes the rows of recorded queries whose streams were deleted (query retention): a rebuild from the log no longer
 * sees them either, so the read model stays what a rebuild makes.
 */
export async function removeQueryRecords(sql: Sql, requestIds: string[]): Promise<void> {
  await sql.query('DELETE FROM rm_queries WHERE request_id = ANY($1::uuid[])', [requestIds]);
}
