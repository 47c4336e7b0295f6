import type { Embedder } from './embedder.port';
import { contentHash, type EmbeddingCacheStore } from './embedding-cache';

/**
 * Puts a content-addressed cache in front of an embedder: keyed by (inner.modelId, SHA-256 of the text),
 * only misses reach the inner embedder, a text repeated within one call is embedded once, order is kept.
 * Same modelId and dimensions as the inner embedder: caching does not change the vector space.
 */
export class CachedEmbedder implements Embedder {
  constructor(
    private readonly inner: Embedder,
    private readonly store: EmbeddingCacheStore,
  ) {}

  get modelId(): string {
    return this.inner.modelId;
  }

  get dimensions(): number {
    return this.inner.dimensions;
  }

  get inProcessFast(): boolean {
    return this.inner.inProcessFast === true;
  }

  /** Straight to an inProcessFast inner embedder (no cache read or write); through the cache otherwise. */
  async embedOnce(texts: string[]): Promise<Float32Array[]> {
    if (!this.inner.inProcessFast) return this.embed(texts);
    const vectors = await this.inner.embed(texts);
    for (const vector of vectors) this.checkDimensions(vector, 'embedder');
    return vectors;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const model = this.inner.modelId;
    const hashes = texts.map(contentHash);
    const vectors = await this.store.getMany(model, [...new Set(hashes)]);
    for (const vector of vectors.values()) this.checkDimensions(vector, 'cache');

    const missing = new Map<string, string>(); // hash → text, first occurrence
    hashes.forEach((hash, i) => {
      if (!vectors.has(hash) && !missing.has(hash)) missing.set(hash, texts[i]);
    });
    if (missing.size > 0) {
      const fresh = await this.inner.embed([...missing.values()]);
      if (fresh.length !== missing.size) throw new Error(`${model} returned ${fresh.length} vectors for ${missing.size} texts`);
      const entries = [...missing.keys()].map((hash, k) => ({ contentHash: hash, vector: this.checkDimensions(fresh[k], 'embedder') }));
      await this.store.putMany(model, entries);
      for (const { contentHash: hash, vector } of entries) vectors.set(hash, vector);
    }
    // A copy per position, so a caller mutating one result cannot change another.
    return hashes.map((hash) => Float32Array.from(vectors.get(hash)!));
  }

  private checkDimensions(vector: Float32Array, from: string): Float32Array {
    if (vector.length !== this.inner.dimensions) {
      throw new Error(`${this.inner.modelId}: ${from} vector has ${vector.length} dimensions, expected ${this.inner.dimensions}`);
    }
    return vector;
  }
}
