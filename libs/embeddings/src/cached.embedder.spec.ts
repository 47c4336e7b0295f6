import { CachedEmbedder } from './cached.embedder';
import type { Embedder } from './embedder.port';
import { InMemoryEmbeddingCache, bytesToVector, contentHash, vectorToBytes } from './embedding-cache';
import { TrigramHashingEmbedder } from './trigram-hashing';

class CountingEmbedder implements Embedder {
  readonly calls: string[][] = [];
  private readonly inner = new TrigramHashingEmbedder(8);
  readonly modelId = this.inner.modelId;
  readonly dimensions = this.inner.dimensions;
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls.push(texts);
    return this.inner.embed(texts);
  }
}

describe('CachedEmbedder (in-memory store)', () => {
  it('embeds misses only, each distinct text once, and keeps the order', async () => {
    const counting = new CountingEmbedder();
    const cached = new CachedEmbedder(counting, new InMemoryEmbeddingCache());
    const first = await cached.embed(['b', 'a', 'b', 'c', 'a']);
    expect(counting.calls).toEqual([['b', 'a', 'c']]);
    const direct = await new TrigramHashingEmbedder(8).embed(['b', 'a', 'b', 'c', 'a']);
    expect(first.map((v) => Array.from(v))).toEqual(direct.map((v) => Array.from(v)));

    const second = await cached.embed(['c', 'd', 'a']);
    expect(counting.calls).toEqual([['b', 'a', 'c'], ['d']]);
    expect(Array.from(second[0])).toEqual(Array.from(first[3]));
    expect(Array.from(second[2])).toEqual(Array.from(first[1]));
  });

  it('embedOnce skips the store for an inProcessFast inner embedder, and goes through it otherwise', async () => {
    const fast = new CountingEmbedder();
    Object.defineProperty(fast, 'inProcessFast', { value: true });
    const store = new InMemoryEmbeddingCache();
    const cached = new CachedEmbedder(fast, store);
    expect(cached.inProcessFast).toBe(true);
    const once = await cached.embedOnce(['q1', 'q2']);
    expect(store.size).toBe(0);
    expect(once.map((v) => Array.from(v))).toEqual((await new TrigramHashingEmbedder(8).embed(['q1', 'q2'])).map((v) => Array.from(v)));
    await cached.embedOnce(['q1']);
    expect(fast.calls).toEqual([['q1', 'q2'], ['q1']]);

    const slow = new CountingEmbedder();
    const viaCache = new CachedEmbedder(slow, store);
    expect(viaCache.inProcessFast).toBe(false);
    await viaCache.embedOnce(['q1']);
    await viaCache.embedOnce(['q1']);
    expect(slow.calls).toEqual([['q1']]);
    expect(store.size).toBe(1);
  });

  it('does not call the inner embedder at all when everything is cached, or for no texts', async () => {
    const counting = new CountingEmbedder();
    const cached = new CachedEmbedder(counting, new InMemoryEmbeddingCache());
    await cached.embed(['x', 'y']);
    await cached.embed(['y', 'x', 'x']);
    await cached.embed([]);
    expect(counting.calls).toHaveLength(1);
  });

  it('keys by model id: another model misses', async () => {
    const store = new InMemoryEmbeddingCache();
    const a = new CountingEmbedder();
    await new CachedEmbedder(a, store).embed(['same text']);
    const b = new CountingEmbedder();
    Object.defineProperty(b, 'modelId', { value: 'other-model' });
    await new CachedEmbedder(b, store).embed(['same text']);
    expect(b.calls).toEqual([['same text']]);
    expect(store.size).toBe(2);
  });

  it('passes the vector space through and returns independent copies', async () => {
    const counting = new CountingEmbedder();
    const cached = new CachedEmbedder(counting, new InMemoryEmbeddingCache());
    expect(cached.modelId).toBe(counting.modelId);
    expect(cached.dimensions).toBe(8);
    const [v1, v2] = await cached.embed(['dup', 'dup']);
    v1[0] = 42;
    expect(v2[0]).not.toBe(42);
    expect((await cached.embed(['dup']))[0][0]).not.toBe(42);
  });

  it('refuses a cached vector of the wrong length', async () => {
    const store = new InMemoryEmbeddingCache();
    const counting = new CountingEmbedder();
    await store.putMany(counting.modelId, [{ contentHash: contentHash('t'), vector: new Float32Array(3) }]);
    await expect(new CachedEmbedder(counting, store).embed(['t'])).rejects.toThrow(/3 dimensions/);
  });
});

describe('float32 bytes', () => {
  it('round-trips exactly, little-endian', () => {
    const v = Float32Array.from([1, -2.5, 1e-38, Number.MAX_VALUE, -0]);
    const bytes = vectorToBytes(v);
    expect(bytes.subarray(0, 4)).toEqual(Buffer.from([0x00, 0x00, 0x80, 0x3f]));
    expect(Buffer.from(bytesToVector(bytes).buffer)).toEqual(Buffer.from(v.buffer));
  });

  it('hashes content as hex SHA-256', () => {
    expect(contentHash('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
