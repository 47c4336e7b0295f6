import type { Pool } from 'pg';
import { bytesToVector, vectorToBytes, type EmbeddingCacheStore } from './embedding-cache';

/**
 * Embedding cache in Postgres: `embedding_cache(model, content_hash, vector bytea)`, vectors as float32 LE bytes.
 * Shared by every api and worker process, and what lets a projection rebuild run without calling the embedder.
 * Reads and writes go in batches of `batchSize` keys (one statement each, arrays as parameters).
 */
export class PostgresEmbeddingCache implements EmbeddingCacheStore {
  constructor(
    private readonly pool: Pool,
    private readonly batchSize = 500,
  ) {}

  /**
   * Creates the table if it does not exist. Safe on every start and from several processes at once:
   * concurrent `CREATE TABLE IF NOT EXISTS` can still collide in Postgres' catalog, so it runs under a
   * transaction-scoped advisory lock.
   */
  async init(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('crs:embedding_cache:init'))`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS embedding_cache (
          model        text  NOT NULL,
          content_hash text  NOT NULL,
          vector       bytea NOT NULL,
          PRIMARY KEY (model, content_hash)
        )`);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async getMany(model: string, contentHashes: string[]): Promise<Map<string, Float32Array>> {
    const found = new Map<string, Float32Array>();
    const unique = [...new Set(contentHashes)];
    for (let start = 0; start < unique.length; start += this.batchSize) {
      const { rows } = await this.pool.query<{ content_hash: string; vector: Buffer }>(
        'SELECT content_hash, vector FROM embedding_cache WHERE model = $1 AND content_hash = ANY($2::text[])',
        [model, unique.slice(start, start + this.batchSize)],
      );
      for (const row of rows) found.set(row.content_hash, bytesToVector(row.vector));
    }
    return found;
  }

  /**
   * Inserts in content-hash order (each hash once, its first vector): an insert that meets a row another transaction is
   * inserting waits for it, so two pipeline batches sharing texts listed in different orders could each wait for the
   * other (a deadlock); in one order they wait in turn.
   */
  async putMany(model: string, entries: Array<{ contentHash: string; vector: Float32Array }>): Promise<void> {
    const unique = [...new Map([...entries].reverse().map((e) => [e.contentHash, e])).values()].sort((a, b) =>
      a.contentHash < b.contentHash ? -1 : a.contentHash > b.contentHash ? 1 : 0,
    );
    for (let start = 0; start < unique.length; start += this.batchSize) {
      const batch = unique.slice(start, start + this.batchSize);
      await this.pool.query(
        `INSERT INTO embedding_cache (model, content_hash, vector)
         SELECT $1, h, v FROM unnest($2::text[], $3::bytea[]) AS t(h, v) ORDER BY h COLLATE "C"
         ON CONFLICT DO NOTHING`,
        [model, batch.map((e) => e.contentHash), batch.map((e) => vectorToBytes(e.vector))],
      );
    }
  }
}
