import { CachedEmbedder } from './cached.embedder';
import { EmbeddingError, type Embedder } from './embedder.port';
import type { EmbeddingCacheStore } from './embedding-cache';

/** A vector space: the model id and its vector length, as a database and each of its search indexes record it. */
export interface VectorSpace {
  modelId: string;
  dimensions: number;
}

/** Whether two vector spaces are one: same model id and vector length. */
export const sameVectorSpace = (a: VectorSpace, b: VectorSpace) => a.modelId === b.modelId && a.dimensions === b.dimensions;

/**
 * The embedder to use for a vector space: the configured one when it is that space; for any other, the vectors that
 * space's model left in the embedding cache, and an EmbeddingError (`model_unavailable`) for a text it never embedded.
 *
 * A search index holds vectors of one model only. A process configured with another model (the first step of a
 * re-embed, or a rebuild run with another configuration) still re-stamps and replays such an index from the cache,
 * instead of writing vectors of the wrong length (docs/databases.md, "Changing the embedder").
 */
export class VectorSpaces {
  private readonly others = new Map<string, Embedder>();

  constructor(
    readonly configured: Embedder,
    private readonly cache?: EmbeddingCacheStore,
  ) {}

  for(space: VectorSpace): Embedder {
    if (sameVectorSpace(space, this.configured)) return this.configured;
    const key = `${space.modelId}\u0000${space.dimensions}`;
    let embedder = this.others.get(key);
    if (!embedder) {
      const model = new CacheOnlyModel(space, this.configured.modelId);
      embedder = this.cache ? new CachedEmbedder(model, this.cache) : model;
      this.others.set(key, embedder);
    }
    return embedder;
  }
}

/** The model of a space this process does not run: every text that reaches it (a cache miss) is an error. */
class CacheOnlyModel implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;

  constructor(
    space: VectorSpace,
    private readonly configured: string,
  ) {
    this.modelId = space.modelId;
    this.dimensions = space.dimensions;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (!texts.length) return [];
    throw new EmbeddingError(
      `${texts.length} text(s) have no ${this.modelId} vector in the embedding cache, and this process runs ${this.configured}: ` +
        'configure that model, or move the database to this one (crs databases reembed)',
      'model_unavailable',
    );
  }
}
