/**
 * Candidates per engine call (each store's keyword and vector search): max(min, factor × limit). Enough for fusion
 * and conversation context to matter, bounded for latency: measured on the dev data and at 100k chunks in
 * docs/retrieval.md ("Candidate pool").
 */
export interface PoolSize {
  min: number;
  factor: number;
}
/** `RETRIEVAL_POOL_MIN` (an integer from 1 to 1000) and `RETRIEVAL_POOL_FACTOR` (a number from 1 to 20) override these (config.ts). */
export const POOL_DEFAULTS: PoolSize = { min: 30, factor: 3 };

/** The pool for a query asking for `limit` results. */
export function candidatePool(pool: PoolSize, limit: number): number {
  return Math.max(pool.min, Math.ceil(limit * pool.factor));
}
