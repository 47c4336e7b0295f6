/**
 * Candidates per engine call (each store's keyword and vector search): max(min, factor × limit). Enough for fusion
 * and conversation context to matter, bounded for latency: measured on the dev data and at 100k chunks in
 * docs/retrieval.md ("Candidate pool").
 */
export interface PoolSize {
  min: number;
  factor: number;
}
export const POOL_DEFAULTS: PoolSize = { min: 30, factor: 3 };

/** The pool for a query asking for `limit` results. */
export function candidatePool(pool: PoolSize, limit: number): number {
  return Math.max(pool.min, Math.ceil(limit * pool.factor));
}

/**
 * `RETRIEVAL_POOL_MIN` (an integer from 1 to 1000) and `RETRIEVAL_POOL_FACTOR` (a number from 1 to 20), for tuning
 * without a rebuild; a bad value is refused at start.
 */
export function poolSize(env: NodeJS.ProcessEnv): PoolSize {
  const read = (name: string, fallback: number, ok: (n: number) => boolean, what: string): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const n = Number(raw);
    if (!ok(n)) throw new Error(`${name} must be ${what}, got ${raw}`);
    return n;
  };
  return {
    min: read('RETRIEVAL_POOL_MIN', POOL_DEFAULTS.min, (n) => Number.isInteger(n) && n >= 1 && n <= 1000, 'an integer from 1 to 1000'),
    factor: read('RETRIEVAL_POOL_FACTOR', POOL_DEFAULTS.factor, (n) => Number.isFinite(n) && n >= 1 && n <= 20, 'a number from 1 to 20'),
  };
}
