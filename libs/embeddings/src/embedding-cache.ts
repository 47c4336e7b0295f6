import { createHash } from 'node:crypto';

/**
 * Where CachedEmbedder keeps vectors, keyed by (model id, SHA-256 of the text).
 * Implementations: InMemoryEmbeddingCache, PostgresEmbeddingCache.
 */
export interface EmbeddingCacheStore {
  /** The cached vectors among `contentHashes`, by hash; missing hashes are simply absent. */
  getMany(model: string, contentHashes: string[]): Promise<Map<string, Float32Array>>;
  /** Stores vectors; an existing (model, hash) entry is kept as it is (first write wins). */
  putMany(model: string, entries: Array<{ contentHash: string; vector: Float32Array }>): Promise<void>;
}

/** Hex SHA-256 of the UTF-8 text: the cache key next to the model id. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A process-local store, for tests and single-shot tools. Stores and returns copies. */
export class InMemoryEmbeddingCache implements EmbeddingCacheStore {
  private readonly entries = new Map<string, Float32Array>();

  get size(): number {
    return this.entries.size;
  }

  async getMany(model: string, contentHashes: string[]): Promise<Map<string, Float32Array>> {
    const found = new Map<string, Float32Array>();
    for (const hash of contentHashes) {
      const vector = this.entries.get(key(model, hash));
      if (vector) found.set(hash, Float32Array.from(vector));
    }
    return found;
  }

  async putMany(model: string, entries: Array<{ contentHash: string; vector: Float32Array }>): Promise<void> {
    for (const { contentHash: hash, vector } of entries) {
      const k = key(model, hash);
      if (!this.entries.has(k)) this.entries.set(k, Float32Array.from(vector));
    }
  }
}

function key(model: string, hash: string): string {
  return `${model}\u0000${hash}`;
}

/** float32 little-endian bytes, the storage format on every machine. */
export function vectorToBytes(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i], i * 4);
  return bytes;
}

export function bytesToVector(bytes: Uint8Array): Float32Array {
  if (bytes.length % 4 !== 0) throw new Error(`embedding cache: ${bytes.length} bytes is not a float32 vector`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector;
}
