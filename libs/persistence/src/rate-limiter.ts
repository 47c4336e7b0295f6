import type { Sql } from './data-source';

/**
 * Fixed-window rate limiting per organization and bucket, counted in Postgres so every API instance
 * shares the count. `consume` is one round trip.
 */
export const RATE_LIMIT_DDL = `CREATE TABLE IF NOT EXISTS rate_limit_windows (
  org_id text NOT NULL,
  bucket text NOT NULL,
  window_start timestamptz NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (org_id, bucket, window_start)
)`;

export interface RateDecision {
  allowed: boolean;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  retryAfterSeconds: number;
}

export class RateLimiter {
  constructor(private readonly sql: Sql, private readonly now: () => number = Date.now) {}

  async init(): Promise<void> {
    await this.sql.query(RATE_LIMIT_DDL);
  }

  async consume(orgId: string, bucket: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    const now = this.now();
    const windowMs = windowSeconds * 1000;
    const start = Math.floor(now / windowMs) * windowMs;
    const rows: { count: number }[] = await this.sql.query(
      `INSERT INTO rate_limit_windows (org_id, bucket, window_start, count) VALUES ($1, $2, to_timestamp($3 / 1000.0), 1)
       ON CONFLICT (org_id, bucket, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
       RETURNING count`,
      [orgId, bucket, start],
    );
    const count = rows[0].count;
    const retryAfterSeconds = Math.max(1, Math.ceil((start + windowMs - now) / 1000));
    if (Math.random() < 0.01) {
      await this.sql.query(`DELETE FROM rate_limit_windows WHERE window_start < now() - interval '1 day'`).catch(() => undefined);
    }
    return { allowed: count <= limit, remaining: Math.max(0, limit - count), retryAfterSeconds };
  }
}
