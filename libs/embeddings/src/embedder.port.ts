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
