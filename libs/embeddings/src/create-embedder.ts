import { CachedEmbedder } from './cached.embedder';
import { EmbeddingError, type Embedder } from './embedder.port';
import type { EmbeddingCacheStore } from './embedding-cache';
import { GloveSifEmbedder } from './glove-sif.embedder';
import { OpenAiCompatibleEmbedder } from './openai-compatible.embedder';
import { UniversalSentenceEncoderEmbedder } from './universal-sentence-encoder.embedder';

export type EmbedderProvider = 'glove' | 'use' | 'openai';

/** What the app passes in (from its own configuration); this module reads no environment variables. */
export interface EmbedderConfig {
  /** Default: `openai` when `url` is set, else `glove`. */
  provider?: EmbedderProvider;
  /** openai: server root, with or without `/v1`. */
  url?: string;
  /** openai: model name (required). Ignored by the offline providers. */
  model?: string;
  /** openai: bearer token. */
  apiKey?: string;
  /** openai: vector length, when the model is not in KNOWN_DIMENSIONS. */
  dimensions?: number;
  /** openai: texts per request (default 64); use: texts per model call (default 32). */
  batchSize?: number;
  /** openai: per-request timeout in ms (default 30 000). */
  timeoutMs?: number;
  /** openai: retries on transient failures (default 3). */
  maxRetries?: number;
  /** glove: where the compact GloVe asset is cached (default `node_modules/.cache/crs-embeddings`). */
  cacheDir?: string;
  /** When given, the embedder is wrapped in a CachedEmbedder over this store. */
  cache?: EmbeddingCacheStore;
}

export function createEmbedder(config: EmbedderConfig = {}): Embedder {
  const embedder = createProvider(config);
  return config.cache ? new CachedEmbedder(embedder, config.cache) : embedder;
}

function createProvider(config: EmbedderConfig): Embedder {
  const provider = config.provider ?? (config.url ? 'openai' : 'glove');
  switch (provider) {
    case 'glove':
      return new GloveSifEmbedder({ cacheDir: config.cacheDir });
    case 'use':
      return new UniversalSentenceEncoderEmbedder({ batchSize: config.batchSize });
    case 'openai':
      if (!config.url || !config.model) throw new EmbeddingError('the openai embedder needs url and model', 'bad_config');
      return new OpenAiCompatibleEmbedder({
        baseUrl: config.url,
        model: config.model,
        apiKey: config.apiKey,
        dimensions: config.dimensions,
        batchSize: config.batchSize,
        timeoutMs: config.timeoutMs,
        maxRetries: config.maxRetries,
      });
    default: {
      const unknown: never = provider;
      throw new EmbeddingError(`unknown embedder provider "${String(unknown)}" (glove, use, openai)`, 'bad_config');
    }
  }
}
