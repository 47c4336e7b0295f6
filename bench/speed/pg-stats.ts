import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/**
 * Read-only looks at the service's own stores, to explain where ingest and query time goes (never used to
 * ingest or answer anything): Postgres activity counters, LanceDB commit counts, and the server-side retrieval
 * time the service records in its QueryRecorded events.
 */
export interface PgCounters {
  xactCommit: number;
  tupInserted: number;
  tupUpdated: number;
  tupDeleted: number;
  tupFetched: number;
}

export async function pgCounters(databaseUrl: string): Promise<PgCounters> {
  const c = new Client({ connectionString: databaseUrl, application_name: 'crs-bench-stats' });
  await c.connect();
  try {
    // Counters are flushed by each backend at transaction end (and at most every second for busy ones).
    const { rows } = await c.query(
      `SELECT xact_commit::float8 AS c, tup_inserted::float8 AS i, tup_updated::float8 AS u, tup_deleted::float8 AS d, tup_fetched::float8 AS f
       FROM pg_stat_database WHERE datname = current_database()`,
    );
    return { xactCommit: rows[0].c, tupInserted: rows[0].i, tupUpdated: rows[0].u, tupDeleted: rows[0].d, tupFetched: rows[0].f };
  } finally {
    await c.end();
  }
}

export function countersPerItem(a: PgCounters, b: PgCounters, items: number) {
  const per = (x: number) => Math.round((x / Math.max(1, items)) * 10) / 10;
  return { commitsPerItem: per(b.xactCommit - a.xactCommit), rowsInsertedPerItem: per(b.tupInserted - a.tupInserted), rowsUpdatedPerItem: per(b.tupUpdated - a.tupUpdated), rowsDeletedPerItem: per(b.tupDeleted - a.tupDeleted) };
}

/** LanceDB table versions (one manifest per commit; the service keeps versions for an hour) per table directory. */
export function lanceCommits(lanceDir: string): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const t of readdirSync(lanceDir)) {
      if (!t.endsWith('.lance')) continue;
      try {
        out[t.replace(/\.lance$/, '')] = readdirSync(join(lanceDir, t, '_versions')).filter((f) => f.endsWith('.manifest')).length;
      } catch {
        /* no versions dir */
      }
    }
  } catch {
    /* no lancedb dir */
  }
  return out;
}

/** The `latencyMs` the service recorded (QueryService: from the start of the query to the ranked results, before the QueryRecorded append and the graph context, which run together). */
export async function recordedQueryLatencies(databaseUrl: string, requestIds: string[]): Promise<Map<string, number>> {
  const c = new Client({ connectionString: databaseUrl, application_name: 'crs-bench-stats' });
  await c.connect();
  try {
    const { rows } = await c.query(`SELECT data->>'requestId' AS id, (data->>'latencyMs')::float8 AS ms FROM events WHERE type = 'QueryRecorded' AND data->>'requestId' = ANY($1)`, [requestIds]);
    return new Map(rows.map((r: { id: string; ms: number }) => [r.id, r.ms]));
  } finally {
    await c.end();
  }
}

/** How many events the service's log (the embedded default's `events` table) holds up to a position, each once. */
export async function logEventCount(databaseUrl: string, upToPosition: number): Promise<number> {
  const c = new Client({ connectionString: databaseUrl, application_name: 'crs-bench-stats' });
  await c.connect();
  try {
    const { rows } = await c.query(`SELECT count(*)::float8 AS n FROM events WHERE position <= $1`, [upToPosition]);
    return rows[0].n;
  } finally {
    await c.end();
  }
}

/** One normalised statement's share of a phase (pg_stat_statements; the service runs with POSTGRES_STAT_STATEMENTS=true). */
export interface PgStatement {
  query: string;
  calls: number;
  totalMs: number;
  meanMs: number;
  rows: number;
}

/** Zeroes pg_stat_statements (a no-op answer of false when the extension is absent). */
export async function resetPgStatements(databaseUrl: string): Promise<boolean> {
  const c = new Client({ connectionString: databaseUrl, application_name: 'crs-bench-stats' });
  await c.connect();
  try {
    const { rows } = await c.query(`SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'`);
    if (!rows.length) return false;
    await c.query('SELECT pg_stat_statements_reset()');
    return true;
  } finally {
    await c.end();
  }
}

/** The statements that took the most execution time since the last reset (this tool's own excluded). */
export async function topPgStatements(databaseUrl: string, limit = 15): Promise<PgStatement[]> {
  const c = new Client({ connectionString: databaseUrl, application_name: 'crs-bench-stats' });
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS q, calls::float8 AS calls, total_exec_time::float8 AS total, rows::float8 AS rows
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND query NOT ILIKE '%pg_stat_statements%' AND query NOT ILIKE '%pg_stat_database%'
       ORDER BY total_exec_time DESC LIMIT $1`,
      [limit],
    );
    return rows.map((r: { q: string; calls: number; total: number; rows: number }) => ({
      query: r.q.length > 160 ? `${r.q.slice(0, 157)}...` : r.q,
      calls: r.calls,
      totalMs: Math.round(r.total),
      meanMs: Math.round((r.total / Math.max(1, r.calls)) * 1000) / 1000,
      rows: r.rows,
    }));
  } finally {
    await c.end();
  }
}
