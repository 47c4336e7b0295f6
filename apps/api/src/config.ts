import { resolve } from 'node:path';
import type { EmbedderSpec } from '../../../libs/domain/src/events';

/** Every setting, read from the environment once. The README's configuration table mirrors this. */
export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  /** Postgres for read models, checkpoints and keys (and the event log unless eventstoreUrl is set). */
  databaseUrl: string;
  eventstoreUrl?: string;
  elasticsearchUrl?: string;
  bootstrapApiKey?: string;
  /** Run projections and processors inside the API process (single-node mode). */
  worker: boolean;
  logLevel: string;
  /** Longest a command waits for its projections before answering (read-your-writes bound). */
  projectionWaitMs: number;
  /** Readiness fails when any read model lags the log by more than this many positions. */
  readinessMaxLag: number;
  /** The embedder new databases are created with (recorded per database). */
  embedder: EmbedderSpec;
  embeddings: { provider?: 'glove' | 'use' | 'openai'; url?: string; model?: string; apiKey?: string; dimensions?: number };
  pipeline: { concurrency: number; leaseMs: number; maxAttempts: number; pollMs: number; chunkTokens: number };
}

export const API_VERSION = '2.0.1';

export function configFromEnv(env: NodeJS.ProcessEnv, databaseUrl: string): AppConfig {
  return {
    port: Number(env.PORT ?? 8080),
    host: env.HOST ?? '127.0.0.1',
    dataDir: resolve(env.DATA_DIR ?? '.data'),
    databaseUrl,
    eventstoreUrl: env.EVENTSTORE_URL || undefined,
    elasticsearchUrl: env.ELASTICSEARCH_URL || undefined,
    bootstrapApiKey: env.BOOTSTRAP_API_KEY || undefined,
    worker: (env.WORKER ?? 'true') !== 'false',
    logLevel: env.LOG_LEVEL ?? 'info',
    projectionWaitMs: Number(env.PROJECTION_WAIT_MS ?? 5000),
    readinessMaxLag: Number(env.READINESS_MAX_LAG ?? 1000),
    embedder: { modelId: '', dimensions: 0 }, // filled in from the configured embedder at start
    embeddings: {
      provider: (env.EMBEDDINGS_PROVIDER as 'glove' | 'use' | 'openai' | undefined) || undefined,
      url: env.EMBEDDINGS_URL || undefined,
      model: env.EMBEDDINGS_MODEL || undefined,
      apiKey: env.EMBEDDINGS_API_KEY || undefined,
      dimensions: env.EMBEDDINGS_DIMENSIONS ? Number(env.EMBEDDINGS_DIMENSIONS) : undefined,
    },
    pipeline: {
      concurrency: Number(env.PIPELINE_CONCURRENCY ?? 4),
      leaseMs: Number(env.PIPELINE_LEASE_MS ?? 60_000),
      maxAttempts: Number(env.PIPELINE_MAX_ATTEMPTS ?? 3),
      pollMs: Number(env.PIPELINE_POLL_MS ?? 200),
      chunkTokens: Number(env.CHUNK_TOKENS ?? 256),
    },
  };
}
