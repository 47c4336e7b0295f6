/**
 * The embedder port: text in, unit vectors out.
 *
 * Adapters: GloveSifEmbedder (offline default), UniversalSentenceEncoderEmbedder (offline, heavier),
 * OpenAiCompatibleEmbedder (any `/v1/embeddings` endpoint), and CachedEmbedder in front of any of them.
 * All pass one contract suite (test/integration/embedder.contract.ts).
 */
export interface Embedder {
  /**
   * Names the vector space: model, version and every setting that changes the vectors.
   * Vectors with different ids must never be compared or stored in the same index.
   */
  readonly modelId: string;
  readonly dimensions: number;
  /**
   * One L2-normalized vector per text, in input order (so cosine similarity is a dot product).
   * Texts that are empty (or hold nothing the model can read) get `emptyTextVector(dimensions)`.
   */
  embed(texts: string[]): Promise<Float32Array[]>;
  /**
   * True when vectors are computed in this process faster than a cache round trip (GloVe-SIF: ~0.05 ms a text):
   * a cache in front then costs more than it saves on texts seen once, such as queries.
   */
  readonly inProcessFast?: boolean;
  /**
   * `embed` for one-off texts (queries): the same vectors, by the cheapest route. A cache in front of an
   * inProcessFast embedder is skipped (no read, no write). Optional; callers fall back to `embed`.
   */
  embedOnce?(texts: string[]): Promise<Float32Array[]>;
}

/** Raised when an embedder cannot produce vectors (remote failure, bad response, unusable model). */
export class EmbeddingError extends Error {
  constructor(
    message: string,
    readonly code: 'remote_failed' | 'remote_timeout' | 'bad_response' | 'model_unavailable' | 'bad_config',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EmbeddingError';
  }
}
