import { resolve } from 'node:path';
import type { EmbedderSpec } from '../../../libs/domain/src/events';
import { parseRetrySchedule } from '../../../libs/domain/src/webhooks/delivery.decider';

/** Every setting, read from the environment once. The README's configuration table mirrors this. */
/**
 * Indexing batches in flight per process and items per batch. 3 × 96 instead of 2 × 64 since cedd6e2: on the 10k
 * speed corpus (ingest only, alternating runs) memories went from 241 to 301-320 items/s to searchable and apps from
 * 212 to 268-285, with less CPU per item: while one batch waits for the projections, the others keep both cores busy,
 * and each wake of the projections carries more events (docs/ingestion.md).
 */
export const PIPELINE_DEFAULTS = { concurrency: 3, batchSize: 96 } as const;

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
  /** A collection's deletion spares a blob stored or renewed this recently, and looks at it again this much later. */
  blobSweepGraceMs: number;
  /** Blobs of at most this many bytes are rows in Postgres, larger ones files under DATA_DIR/blobs (0: every blob a file). */
  blobRowMaxBytes: number;
  /** The embedder new databases are created with (recorded per database). */
  embedder: EmbedderSpec;
  embeddings: { provider?: 'glove' | 'use' | 'openai'; url?: string; model?: string; apiKey?: string; dimensions?: number };
  /**
   * In-memory caches, each bounded (docs/operations.md): the embedded search engine's index pages and file metadata,
   * recently used content blobs. The engine keeps superseded table versions this long before removing them.
   */
  caches: { searchIndexBytes: number; searchMetadataBytes: number; blobBytes: number };
  searchVersionRetentionMs: number;
  /** Recorded queries (QueryRecorded and rm_queries) are removed this long after they were asked, unless feedback links to them; 0 keeps them. */
  queryRetentionMs: number;
  /** OpenAI-compatible chat endpoint for inference; offline rule-based extraction when unset. */
  llm: { baseUrl?: string; model?: string; apiKey?: string };
  pipeline: { concurrency: number; batchSize: number; leaseMs: number; maxAttempts: number; pollMs: number; chunkTokens: number };
  /** POST /feedback: submissions per organization per fixed window (docs/feedback.md). */
  feedback: { rateLimit: number; rateWindowSeconds: number };
  /** Presigned content URLs of GET /context/inspect (docs/ingestion.md, "Presigned URLs"). */
  presignedUrls: {
    /** HMAC-SHA256 key (64 hex or base64 of 32 bytes); default: a key file under DATA_DIR. Give every API process the same. */
    key?: string;
    /** The service's address as clients reach it (`https://crs.example.com`); default: the request's own scheme and Host. */
    publicUrl?: string;
  };
  /** Webhook delivery (docs/webhooks.md). */
  webhooks: {
    /** Development and tests only: allow http:// and 127.0.0.1/::1 receivers. Off by default. */
    allowLoopback: boolean;
    /** AES-256-GCM key for signing secrets at rest (64 hex or base64 of 32 bytes); default: a key file under DATA_DIR. */
    secretKey?: string;
    timeoutMs: number;
    /** Delays after the 1st, 2nd, ... failed attempt; attempts = length + 1. */
    retryScheduleMs: number[];
    /** Relative jitter applied to each delay (0.2 = +/-20 %). */
    retryJitter: number;
    leaseMs: number;
    pollMs: number;
    concurrency: number;
  };
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
    blobSweepGraceMs: Number(env.BLOB_SWEEP_GRACE_MS ?? 60_000),
    blobRowMaxBytes: wholeNumber(env, 'BLOB_ROW_MAX_BYTES', 4096),
    embedder: { modelId: '', dimensions: 0 }, // filled in from the configured embedder at start
    caches: {
      searchIndexBytes: mebibytes(env, 'SEARCH_INDEX_CACHE_MB', 256),
      searchMetadataBytes: mebibytes(env, 'SEARCH_METADATA_CACHE_MB', 64),
      blobBytes: mebibytes(env, 'BLOB_CACHE_MB', 64),
    },
    searchVersionRetentionMs: wholeNumber(env, 'SEARCH_VERSION_RETENTION_SECONDS', 30) * 1000,
    queryRetentionMs: wholeNumber(env, 'QUERY_RETENTION_DAYS', 30) * 86_400_000,
    embeddings: {
      provider: (env.EMBEDDINGS_PROVIDER as 'glove' | 'use' | 'openai' | undefined) || undefined,
      url: env.EMBEDDINGS_URL || undefined,
      model: env.EMBEDDINGS_MODEL || undefined,
      apiKey: env.EMBEDDINGS_API_KEY || undefined,
      dimensions: env.EMBEDDINGS_DIMENSIONS ? Number(env.EMBEDDINGS_DIMENSIONS) : undefined,
    },
    llm: { baseUrl: env.LLM_BASE_URL || undefined, model: env.LLM_MODEL || undefined, apiKey: env.LLM_API_KEY || undefined },
    pipeline: {
      concurrency: Number(env.PIPELINE_CONCURRENCY ?? PIPELINE_DEFAULTS.concurrency),
      batchSize: Number(env.PIPELINE_BATCH_SIZE ?? PIPELINE_DEFAULTS.batchSize),
      leaseMs: Number(env.PIPELINE_LEASE_MS ?? 60_000),
      maxAttempts: Number(env.PIPELINE_MAX_ATTEMPTS ?? 3),
      pollMs: Number(env.PIPELINE_POLL_MS ?? 200),
      chunkTokens: Number(env.CHUNK_TOKENS ?? 512),
    },
    feedback: {
      rateLimit: Number(env.FEEDBACK_RATE_LIMIT ?? 100),
      rateWindowSeconds: Number(env.FEEDBACK_RATE_WINDOW_SECONDS ?? 60),
    },
    presignedUrls: { key: env.PRESIGNED_URL_KEY || undefined, publicUrl: env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/+$/, '') : undefined },
    webhooks: {
      allowLoopback: env.WEBHOOK_ALLOW_LOOPBACK === 'true',
      secretKey: env.WEBHOOK_SECRET_KEY || undefined,
      timeoutMs: Number(env.WEBHOOK_TIMEOUT_MS ?? 10_000),
      retryScheduleMs: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE),
      retryJitter: Number(env.WEBHOOK_RETRY_JITTER ?? 0.2),
      leaseMs: Number(env.WEBHOOK_LEASE_MS ?? 60_000),
      pollMs: Number(env.WEBHOOK_POLL_MS ?? 1000),
      concurrency: Number(env.WEBHOOK_CONCURRENCY ?? 4),
    },
  };
}

/** A setting that is a whole number, 0 or more; an unset or empty variable takes the default. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a whole number (0 or more), got ${JSON.stringify(raw)}`);
  return value;
}

/** A cache size given in MiB, in bytes. */
const mebibytes = (env: NodeJS.ProcessEnv, name: string, fallback: number) => wholeNumber(env, name, fallback) * 2 ** 20;

/** Delays after each failed attempt: 8 attempts over about 28 hours. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';
