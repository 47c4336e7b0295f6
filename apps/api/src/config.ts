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
    embedder: { modelId: 'glove-sif-100d-v1', dimensions: 100 },
  };
}
