import { resolve } from 'node:path';
import type { EmbedderSpec } from '@crs/domain/events';
import { parseRetrySchedule } from '@crs/domain/webhooks/delivery.decider';
import type { EmbedderProvider } from '@crs/embeddings/create-embedder';
import { parseApiKey } from '@crs/persistence/api-keys';
import { parseKey } from '@crs/persistence/key-file';
import { CONTEXT_DEFAULTS, type ContextWeights, MAX_CONTEXT_DISTANCE } from '@crs/domain/retrieval/conversation-context';
import { POOL_DEFAULTS, type PoolSize } from '@crs/domain/retrieval/pool-size';
import { THINKING_DEFAULTS, thinkingVariable, type ThinkingWeights } from '@crs/domain/retrieval/thinking-weights';

/**
 * Every setting, read from the environment once, at start, and checked there: a malformed value, or a value a
 * setting does not know, stops the start with a message that names the variable and what it accepts. Nothing
 * else reads the environment; the README's configuration table mirrors this.
 */
/**
 * Indexing batches in flight per process and items per batch. On the 10k speed corpus (ingest only, alternating runs)
 * 3 × 96 takes memories to searchable at 301-320 items/s and apps at 268-285, against 241 and 212 with 2 × 64, with
 * less CPU per item: while one batch waits for the projections, the others keep both cores busy, and each wake of the
 * projections carries more events (docs/ingestion.md).
 */
export const PIPELINE_DEFAULTS = { concurrency: 3, batchSize: 96 } as const;

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  /** Postgres for read models, checkpoints and keys (and the event log unless eventstoreUrl is set); empty: the embedded Postgres, started under dataDir. */
  databaseUrl: string;
  /** The embedded Postgres preloads pg_stat_statements. */
  postgresStatStatements: boolean;
  eventstoreUrl?: string;
  elasticsearchUrl?: string;
  bootstrapApiKey?: string;
  /** Run projections and processors inside the API process (single-node mode). */
  worker: boolean;
  logLevel: LogLevel;
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
  embeddings: { provider?: EmbedderProvider; url?: string; model?: string; apiKey?: string; dimensions?: number };
  /**
   * In-memory caches, each bounded (docs/operations.md): the embedded search engine's index pages and file metadata,
   * the copies of small tables it searches in the process (at most searchResidentMaxRows rows each), recently used
   * content blobs. The engine keeps superseded table versions this long before removing them.
   */
  caches: { searchIndexBytes: number; searchMetadataBytes: number; searchResidentBytes: number; searchResidentMaxRows: number; blobBytes: number };
  searchVersionRetentionMs: number;
  /** Recorded queries (QueryRecorded and the queries read model) are removed this long after they were asked, unless feedback links to them; 0 keeps them. */
  queryRetentionMs: number;
  /** Tuning of retrieval, read at start (docs/retrieval.md): candidate pool, conversation context, thinking-mode weights. */
  retrieval: { pool: PoolSize; context: ContextWeights; thinking: ThinkingWeights };
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
  /** Connectors (docs/connectors.md). */
  connectors: {
    /** AES-256-GCM key for connector credentials at rest (64 hex or base64 of 32 bytes); default: a key file under DATA_DIR. */
    secretKey?: string;
    /** Development and tests only: let connectors reach loopback and private addresses. Off by default (no SSRF). */
    allowPrivateNetworks: boolean;
    /** How long a sync holds its resource before another process may take it over; each checkpoint renews it. */
    leaseMs: number;
    /** How often the scheduler looks for due resources when nothing wakes it. */
    pollMs: number;
    /** Syncs one process runs at once (at most one per connector). */
    syncConcurrency: number;
    /**
     * Pruning that would delete more than this share of a resource's known documents (or all of them, an empty
     * listing) is held until the next sync's listing confirms it.
     */
    massDeletionThreshold: number;
  };
}

export const API_VERSION = '2.0.1';

/**
 * The settings of this environment. `databaseUrl`, when given, is the Postgres to use whatever DATABASE_URL says
 * (a test's own database); otherwise DATABASE_URL, or empty for the embedded Postgres.
 */
export function configFromEnv(env: NodeJS.ProcessEnv, databaseUrl?: string): AppConfig {
  const read = new EnvReader(env);
  return {
    port: read.wholeNumber('PORT', 8080, { max: 65_535 }),
    host: read.text('HOST') ?? '127.0.0.1',
    dataDir: resolve(read.text('DATA_DIR') ?? '.data'),
    databaseUrl: databaseUrl ?? read.text('DATABASE_URL') ?? '',
    postgresStatStatements: read.flag('POSTGRES_STAT_STATEMENTS', false),
    eventstoreUrl: read.text('EVENTSTORE_URL'),
    elasticsearchUrl: read.httpUrl('ELASTICSEARCH_URL'),
    bootstrapApiKey: read.secret('BOOTSTRAP_API_KEY', 'of the form <prefix>.<secret> (prefix 4-64 of A-Z a-z 0-9 _ -, secret 16-256 characters)', (v) => parseApiKey(v) !== null),
    worker: read.flag('WORKER', true),
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    projectionWaitMs: read.wholeNumber('PROJECTION_WAIT_MS', 5000),
    readinessMaxLag: read.wholeNumber('READINESS_MAX_LAG', 1000),
    blobSweepGraceMs: read.wholeNumber('BLOB_SWEEP_GRACE_MS', 60_000),
    blobRowMaxBytes: read.wholeNumber('BLOB_ROW_MAX_BYTES', 4096),
    embedder: { modelId: '', dimensions: 0 }, // filled in from the configured embedder at start
    caches: {
      searchIndexBytes: read.mebibytes('SEARCH_INDEX_CACHE_MB', 256),
      searchMetadataBytes: read.mebibytes('SEARCH_METADATA_CACHE_MB', 64),
      searchResidentBytes: read.mebibytes('SEARCH_RESIDENT_CACHE_MB', 64),
      searchResidentMaxRows: read.wholeNumber('SEARCH_RESIDENT_MAX_ROWS', 5000),
      blobBytes: read.mebibytes('BLOB_CACHE_MB', 16),
    },
    searchVersionRetentionMs: read.wholeNumber('SEARCH_VERSION_RETENTION_SECONDS', 30) * 1000,
    queryRetentionMs: read.wholeNumber('QUERY_RETENTION_DAYS', 30) * 86_400_000,
    embeddings: {
      provider: read.oneOf('EMBEDDINGS_PROVIDER', EMBEDDINGS_PROVIDERS, undefined),
      url: read.httpUrl('EMBEDDINGS_URL'),
      model: read.text('EMBEDDINGS_MODEL'),
      apiKey: read.text('EMBEDDINGS_API_KEY'),
      dimensions: read.wholeNumber('EMBEDDINGS_DIMENSIONS', undefined, { min: 1 }),
    },
    retrieval: {
      pool: {
        min: read.wholeNumber('RETRIEVAL_POOL_MIN', POOL_DEFAULTS.min, { min: 1, max: 1000 }),
        factor: read.number('RETRIEVAL_POOL_FACTOR', POOL_DEFAULTS.factor, { min: 1, max: 20 }),
      },
      context: {
        after: read.shares('RETRIEVAL_CONTEXT_AFTER', CONTEXT_DEFAULTS.after, MAX_CONTEXT_DISTANCE),
        before: read.shares('RETRIEVAL_CONTEXT_BEFORE', CONTEXT_DEFAULTS.before, MAX_CONTEXT_DISTANCE),
      },
      thinking: thinkingWeights(read),
    },
    llm: { baseUrl: read.httpUrl('LLM_BASE_URL'), model: read.text('LLM_MODEL'), apiKey: read.text('LLM_API_KEY') },
    pipeline: {
      concurrency: read.wholeNumber('PIPELINE_CONCURRENCY', PIPELINE_DEFAULTS.concurrency, { min: 1 }),
      batchSize: read.wholeNumber('PIPELINE_BATCH_SIZE', PIPELINE_DEFAULTS.batchSize, { min: 1 }),
      leaseMs: read.wholeNumber('PIPELINE_LEASE_MS', 60_000, { min: 1 }),
      maxAttempts: read.wholeNumber('PIPELINE_MAX_ATTEMPTS', 3, { min: 1 }),
      pollMs: read.wholeNumber('PIPELINE_POLL_MS', 200, { min: 1 }),
      chunkTokens: read.wholeNumber('CHUNK_TOKENS', 512, { min: 1 }),
    },
    feedback: {
      rateLimit: read.wholeNumber('FEEDBACK_RATE_LIMIT', 100, { min: 1 }),
      rateWindowSeconds: read.wholeNumber('FEEDBACK_RATE_WINDOW_SECONDS', 60, { min: 1 }),
    },
    presignedUrls: {
      key: read.secret('PRESIGNED_URL_KEY', KEY_FORMAT, isKey),
      publicUrl: read.httpUrl('PUBLIC_URL')?.replace(/\/+$/, ''),
    },
    webhooks: {
      allowLoopback: read.flag('WEBHOOK_ALLOW_LOOPBACK', false),
      secretKey: read.secret('WEBHOOK_SECRET_KEY', KEY_FORMAT, isKey),
      timeoutMs: read.wholeNumber('WEBHOOK_TIMEOUT_MS', 10_000, { min: 1 }),
      retryScheduleMs: read.retrySchedule('WEBHOOK_RETRY_SCHEDULE', DEFAULT_WEBHOOK_RETRY_SCHEDULE),
      retryJitter: read.number('WEBHOOK_RETRY_JITTER', 0.2, { min: 0, max: 1 }),
      leaseMs: read.wholeNumber('WEBHOOK_LEASE_MS', 60_000, { min: 1 }),
      pollMs: read.wholeNumber('WEBHOOK_POLL_MS', 1000, { min: 1 }),
      concurrency: read.wholeNumber('WEBHOOK_CONCURRENCY', 4, { min: 1 }),
    },
    connectors: {
      secretKey: read.secret('CONNECTOR_SECRET_KEY', KEY_FORMAT, isKey),
      allowPrivateNetworks: read.flag('CONNECTOR_ALLOW_PRIVATE_NETWORKS', false),
      leaseMs: read.wholeNumber('CONNECTOR_LEASE_MS', 300_000, { min: 1000 }),
      pollMs: read.wholeNumber('CONNECTOR_POLL_MS', 5000, { min: 10 }),
      syncConcurrency: read.wholeNumber('CONNECTOR_SYNC_CONCURRENCY', 2, { min: 1 }),
      massDeletionThreshold: read.number('CONNECTOR_MASS_DELETION_THRESHOLD', 0.5, { min: 0, max: 1 }),
    },
  };
}

/** A setting the environment gives wrongly; its message names the variable and what it accepts. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const EMBEDDINGS_PROVIDERS = ['glove', 'use', 'openai'] as const satisfies readonly EmbedderProvider[];

const KEY_FORMAT = '32 bytes: 64 hex characters or base64 (e.g. `openssl rand -base64 32`)';
const isKey = (value: string): boolean => {
  try {
    parseKey(value, '');
    return true;
  } catch {
    return false;
  }
};

/** Each weight of thinking mode can be overridden for tuning with `THINKING_<NAME>` (e.g. THINKING_GRAPH_WEIGHT=0.3). */
function thinkingWeights(read: EnvReader): ThinkingWeights {
  const out = { ...THINKING_DEFAULTS };
  for (const key of Object.keys(out) as (keyof ThinkingWeights)[]) out[key] = read.number(thinkingVariable(key), out[key], { min: 0 });
  return out;
}

/**
 * Reads one variable at a time. An unset variable, or one that is empty or only spaces, takes the default (except
 * where a setting says otherwise); any other value must be one the setting accepts.
 */
class EnvReader {
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  private raw(name: string): string | undefined {
    const raw = this.env[name];
    return raw === undefined || raw.trim() === '' ? undefined : raw;
  }

  private refuse(name: string, accepts: string, raw: string): never {
    throw new ConfigurationError(`${name} must be ${accepts} (got ${JSON.stringify(raw)})`);
  }

  text(name: string): string | undefined {
    return this.raw(name);
  }

  /** A value not to be repeated in a message (keys, secrets). */
  secret(name: string, accepts: string, ok: (value: string) => boolean): string | undefined {
    const raw = this.raw(name);
    if (raw !== undefined && !ok(raw)) throw new ConfigurationError(`${name} must be ${accepts}`);
    return raw;
  }

  flag(name: string, fallback: boolean): boolean {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const value = raw.trim();
    if (value !== 'true' && value !== 'false') this.refuse(name, 'true or false', raw);
    return value === 'true';
  }

  oneOf<T extends string, F extends T | undefined>(name: string, values: readonly T[], fallback: F): T | F {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const value = raw.trim();
    if (!(values as readonly string[]).includes(value)) this.refuse(name, `one of ${values.join(', ')}`, raw);
    return value as T;
  }

  /** A whole number from `min` (0 unless given) to `max` (none unless given). */
  wholeNumber<F extends number | undefined>(name: string, fallback: F, range: { min?: number; max?: number } = {}): number | F {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const { min = 0, max } = range;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) {
      this.refuse(name, max === undefined ? `a whole number ≥ ${min}` : `a whole number from ${min} to ${max}`, raw);
    }
    return value;
  }

  /** A size given in MiB, in bytes. */
  mebibytes(name: string, fallback: number): number {
    const raw = this.raw(name);
    const value = Number(raw);
    if (raw !== undefined && (!Number.isSafeInteger(value) || value < 0)) this.refuse(name, 'a whole number of MiB ≥ 0', raw);
    return (raw === undefined ? fallback : value) * 2 ** 20;
  }

  number(name: string, fallback: number, range: { min: number; max?: number }): number {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < range.min || (range.max !== undefined && value > range.max)) {
      this.refuse(name, range.max === undefined ? `a number ≥ ${range.min}` : `a number from ${range.min} to ${range.max}`, raw);
    }
    return value;
  }

  /** An http(s) address. */
  httpUrl(name: string): string | undefined {
    const raw = this.raw(name);
    if (raw === undefined) return undefined;
    let protocol: string | undefined;
    try {
      protocol = new URL(raw.trim()).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'http:' && protocol !== 'https:') this.refuse(name, 'an http:// or https:// URL', raw);
    return raw.trim();
  }

  /**
   * Up to `most` comma-separated shares ≥ 0. Set but empty, or `0`, it turns the lending off (so here an empty
   * value is not the default); trailing zeros look no further.
   */
  shares(name: string, fallback: number[], most: number): number[] {
    const raw = this.env[name];
    if (raw === undefined) return fallback;
    const values = raw.split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
    if (values.length > most || values.some((v) => !Number.isFinite(v) || v < 0)) this.refuse(name, `up to ${most} comma-separated numbers ≥ 0`, raw);
    while (values.length && values[values.length - 1] === 0) values.pop();
    return values;
  }

  /** Delays after the 1st, 2nd, ... failed attempt, e.g. `5s,5m,30m,2h`. */
  retrySchedule(name: string, fallback: string): number[] {
    const raw = this.raw(name);
    try {
      return parseRetrySchedule(raw ?? fallback);
    } catch {
      return this.refuse(name, 'comma-separated delays in ms, s, m or h, such as 5s,5m,30m,2h', raw ?? fallback);
    }
  }
}

/** Delays after each failed attempt: 8 attempts over about 28 hours. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';
