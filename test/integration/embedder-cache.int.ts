import { Pool } from 'pg';
import { CachedEmbedder } from '@crs/embeddings/cached.embedder';
import type { Embedder } from '@crs/embeddings/embedder.port';
import { contentHash } from '@crs/embeddings/embedding-cache';
import { PostgresEmbeddingCache } from '@crs/embeddings/postgres-embedding-cache';
import { TrigramHashingEmbedder } from '@crs/embeddings/trigram-hashing';
import { createTestDatabase } from '../support/test-database';

/** Counts what reaches the real embedder. */
class CountingEmbedder implements Embedder {
  readonly calls: string[][] = [];
  private readonly inner = new TrigramHashingEmbedder(16);
  readonly modelId = this.inner.modelId;
  readonly dimensions = this.inner.dimensions;

  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls.push(texts);
    return this.inner.embed(texts);
  }

  get textsEmbedded(): number {
    return this.calls.reduce((n, c) => n + c.length, 0);
  }
}

/** An embedder that must not be called: what a projection rebuild runs with. */
class UnreachableEmbedder implements Embedder {
  constructor(
    readonly modelId: string,
    readonly dimensions: number,
  ) {}
  async embed(): Promise<Float32Array[]> {
    throw new Error('the embedder was called during a rebuild');
  }
}

describe('PostgresEmbeddingCache', () => {
  let pool: Pool;

  beforeAll(async () => {
    pool = new Pool({ connectionString: await createTestDatabase('embedding_cache'), max: 4 });
  });
  afterAll(() => pool.end());

  it('init() is idempotent, also when run concurrently', async () => {
    const store = new PostgresEmbeddingCache(pool);
    await Promise.all([store.init(), new PostgresEmbeddingCache(pool).init()]);
    await store.init();
    const { rows } = await pool.query(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'embedding_cache' ORDER BY ordinal_position`,
    );
    expect(rows).toEqual([
      { column_name: 'model', data_type: 'text' },
      { column_name: 'content_hash', data_type: 'text' },
      { column_name: 'vector', data_type: 'bytea' },
    ]);
  });

  it('stores float32 bytes and reads them back bit for bit, in batches, per model', async () => {
    const store = new PostgresEmbeddingCache(pool, 3);
    await store.init();
    const entries = Array.from({ length: 10 }, (_, i) => ({
      contentHash: contentHash(`text ${i}`),
      vector: Float32Array.from([i, -i / 3, Math.PI, 1e-30, -0]),
    }));
    await store.putMany('model-a', entries);
    const found = await store.getMany('model-a', [...entries.map((e) => e.contentHash), contentHash('absent')]);
    expect(found.size).toBe(10);
    for (const e of entries) expect(Buffer.from(found.get(e.contentHash)!.buffer)).toEqual(Buffer.from(e.vector.buffer));
    expect((await store.getMany('model-b', [entries[0].contentHash])).size).toBe(0);
    const { rows } = await pool.query(`SELECT DISTINCT octet_length(vector) AS bytes FROM embedding_cache WHERE model = 'model-a'`);
    expect(rows).toEqual([{ bytes: 20 }]);
  });

  it('inserts in content-hash order, each hash once with its first vector, so concurrent batches sharing texts wait in turn', async () => {
    const store = new PostgresEmbeddingCache(pool);
    await store.init();
    const entries = Array.from({ length: 40 }, (_, i) => ({ contentHash: contentHash(`ordered ${i}`), vector: Float32Array.from([i, 1]) }));
    await store.putMany('model-order', [...entries, { contentHash: entries[3].contentHash, vector: Float32Array.from([-1, -1]) }]);
    // The physical order of the rows is the order the statement inserted them in.
    const { rows } = await pool.query(`SELECT content_hash FROM embedding_cache WHERE model = 'model-order' ORDER BY ctid`);
    const hashes = rows.map((r: { content_hash: string }) => r.content_hash);
    expect(hashes).toEqual(entries.map((e) => e.contentHash).sort());
    expect(Array.from((await store.getMany('model-order', [entries[3].contentHash])).get(entries[3].contentHash)!)).toEqual([3, 1]);
  });

  it('keeps the first vector written for a key (ON CONFLICT DO NOTHING)', async () => {
    const store = new PostgresEmbeddingCache(pool);
    await store.init();
    const hash = contentHash('conflict');
    await store.putMany('model-c', [{ contentHash: hash, vector: Float32Array.from([1, 0]) }]);
    await store.putMany('model-c', [
      { contentHash: hash, vector: Float32Array.from([0, 1]) },
      { contentHash: hash, vector: Float32Array.from([0, 1]) },
    ]);
    expect(Array.from((await store.getMany('model-c', [hash])).get(hash)!)).toEqual([1, 0]);
  });

  it('lets a rebuild (new process, new instances) embed without calling the embedder', async () => {
    const texts = ['alpha document', 'beta document', 'alpha document', 'gamma', ''];
    const live = new CountingEmbedder();
    const liveStore = new PostgresEmbeddingCache(pool);
    await liveStore.init();
    const liveVectors = await new CachedEmbedder(live, liveStore).embed(texts);
    expect(live.calls).toEqual([['alpha document', 'beta document', 'gamma', '']]);

    const rebuildStore = new PostgresEmbeddingCache(pool);
    await rebuildStore.init();
    const rebuild = new CachedEmbedder(new UnreachableEmbedder(live.modelId, live.dimensions), rebuildStore);
    const rebuiltVectors = await rebuild.embed(texts);
    expect(rebuiltVectors.map((v) => Array.from(v))).toEqual(liveVectors.map((v) => Array.from(v)));
  });

  it('only sends misses to the embedder', async () => {
    const counting = new CountingEmbedder();
    const store = new PostgresEmbeddingCache(pool);
    await store.init();
    const cached = new CachedEmbedder(counting, store);
    await cached.embed(['one', 'two']);
    await cached.embed(['two', 'three', 'one', 'three']);
    expect(counting.calls).toEqual([['one', 'two'], ['three']]);
    expect(counting.textsEmbedded).toBe(3);
  });
});
