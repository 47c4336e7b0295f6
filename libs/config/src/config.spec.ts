import { resolve } from 'node:path';
import { ConfigurationError, configFromEnv, DEFAULT_WEBHOOK_RETRY_SCHEDULE, PIPELINE_DEFAULTS } from './config';
import { parseRetrySchedule } from '@crs/domain/webhooks/delivery.decider';
import { CONTEXT_DEFAULTS } from '@crs/domain/retrieval/conversation-context';

const load = (env: NodeJS.ProcessEnv) => configFromEnv(env, 'postgres://spec');

/** The message a malformed value stops the load with (it must be a ConfigurationError). */
function refusal(env: NodeJS.ProcessEnv): string {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

const KEY = 'a'.repeat(64);

describe('configuration', () => {
  it('defaults every setting when the environment names none', () => {
    const c = configFromEnv({});
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: resolve('.data'),
      databaseUrl: '',
      postgresStatStatements: false,
      worker: true,
      logLevel: 'info',
      projectionWaitMs: 5000,
      readinessMaxLag: 1000,
      blobSweepGraceMs: 60_000,
      caches: { searchIndexBytes: 256 * 2 ** 20, searchMetadataBytes: 64 * 2 ** 20, searchResidentBytes: 64 * 2 ** 20, searchResidentMaxRows: 5000, blobBytes: 16 * 2 ** 20 },
      searchVersionRetentionMs: 30_000,
      queryRetentionMs: 30 * 86_400_000,
      pipeline: { ...PIPELINE_DEFAULTS, leaseMs: 60_000, maxAttempts: 3, pollMs: 200, chunkTokens: 512 },
      feedback: { rateLimit: 100, rateWindowSeconds: 60 },
      webhooks: { allowLoopback: false, timeoutMs: 10_000, retryScheduleMs: parseRetrySchedule(DEFAULT_WEBHOOK_RETRY_SCHEDULE), retryJitter: 0.2, leaseMs: 60_000, pollMs: 1000, concurrency: 4 },
      connectors: { allowPrivateNetworks: false, leaseMs: 300_000, pollMs: 5000, syncConcurrency: 2, massDeletionThreshold: 0.5 },
    });
    for (const unset of [c.eventstoreUrl, c.elasticsearchUrl, c.bootstrapApiKey, c.presignedUrls.key, c.presignedUrls.publicUrl, c.webhooks.secretKey, c.llm.baseUrl, c.embeddings.provider, c.embeddings.dimensions]) {
      expect(unset).toBeUndefined();
    }
  });

  it('reads each setting from its variable', () => {
    const c = configFromEnv({
      PORT: '9000', HOST: '0.0.0.0', DATA_DIR: '/tmp/crs', DATABASE_URL: 'postgres://db/crs', POSTGRES_STAT_STATEMENTS: 'true',
      EVENTSTORE_URL: 'kurrentdb://es:2113?tls=false', ELASTICSEARCH_URL: 'http://es:9200', BOOTSTRAP_API_KEY: 'crs_boot.0123456789abcdef',
      WORKER: 'false', LOG_LEVEL: 'warn', PROJECTION_WAIT_MS: '0', READINESS_MAX_LAG: '10', BLOB_SWEEP_GRACE_MS: '5',
      SEARCH_INDEX_CACHE_MB: '1', SEARCH_METADATA_CACHE_MB: '0', SEARCH_RESIDENT_CACHE_MB: '3', SEARCH_RESIDENT_MAX_ROWS: '0', BLOB_CACHE_MB: '2', SEARCH_VERSION_RETENTION_SECONDS: '0', QUERY_RETENTION_DAYS: '7',
      EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_URL: 'https://emb.example/v1', EMBEDDINGS_MODEL: 'm', EMBEDDINGS_API_KEY: 'k', EMBEDDINGS_DIMENSIONS: '16',
      LLM_BASE_URL: 'http://llm:8000/v1', LLM_MODEL: 'chat', LLM_API_KEY: 'lk',
      PIPELINE_CONCURRENCY: '2', PIPELINE_BATCH_SIZE: '8', PIPELINE_LEASE_MS: '1000', PIPELINE_MAX_ATTEMPTS: '5', PIPELINE_POLL_MS: '50', CHUNK_TOKENS: '256',
      FEEDBACK_RATE_LIMIT: '10', FEEDBACK_RATE_WINDOW_SECONDS: '1',
      PRESIGNED_URL_KEY: KEY, PUBLIC_URL: 'https://crs.example.com//', WEBHOOK_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'),
      WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_TIMEOUT_MS: '100', WEBHOOK_RETRY_SCHEDULE: '1s,2m', WEBHOOK_RETRY_JITTER: '0',
      WEBHOOK_LEASE_MS: '200', WEBHOOK_POLL_MS: '20', WEBHOOK_CONCURRENCY: '1',
      CONNECTOR_SECRET_KEY: Buffer.alloc(32, 2).toString('base64'), CONNECTOR_ALLOW_PRIVATE_NETWORKS: 'true',
      CONNECTOR_LEASE_MS: '2000', CONNECTOR_POLL_MS: '100', CONNECTOR_SYNC_CONCURRENCY: '3', CONNECTOR_MASS_DELETION_THRESHOLD: '0.25',
    });
    expect(c).toMatchObject({
      port: 9000, host: '0.0.0.0', dataDir: '/tmp/crs', databaseUrl: 'postgres://db/crs', postgresStatStatements: true,
      eventstoreUrl: 'kurrentdb://es:2113?tls=false', elasticsearchUrl: 'http://es:9200', bootstrapApiKey: 'crs_boot.0123456789abcdef',
      worker: false, logLevel: 'warn', projectionWaitMs: 0, readinessMaxLag: 10, blobSweepGraceMs: 5,
      caches: { searchIndexBytes: 2 ** 20, searchMetadataBytes: 0, searchResidentBytes: 3 * 2 ** 20, searchResidentMaxRows: 0, blobBytes: 2 * 2 ** 20 }, searchVersionRetentionMs: 0, queryRetentionMs: 7 * 86_400_000,
      embeddings: { provider: 'openai', url: 'https://emb.example/v1', model: 'm', apiKey: 'k', dimensions: 16 },
      llm: { baseUrl: 'http://llm:8000/v1', model: 'chat', apiKey: 'lk' },
      pipeline: { concurrency: 2, batchSize: 8, leaseMs: 1000, maxAttempts: 5, pollMs: 50, chunkTokens: 256 },
      feedback: { rateLimit: 10, rateWindowSeconds: 1 },
      presignedUrls: { key: KEY, publicUrl: 'https://crs.example.com' },
      webhooks: { allowLoopback: true, timeoutMs: 100, retryScheduleMs: [1000, 120_000], retryJitter: 0, leaseMs: 200, pollMs: 20, concurrency: 1 },
      connectors: { secretKey: Buffer.alloc(32, 2).toString('base64'), allowPrivateNetworks: true, leaseMs: 2000, pollMs: 100, syncConcurrency: 3, massDeletionThreshold: 0.25 },
    });
  });

  it('a database address given by the caller wins over DATABASE_URL', () => {
    expect(configFromEnv({ DATABASE_URL: 'postgres://env' }, 'postgres://own').databaseUrl).toBe('postgres://own');
  });

  it('an empty variable, or one of spaces, takes the default', () => {
    expect(load({ PIPELINE_CONCURRENCY: '', WORKER: ' ', LOG_LEVEL: '', SEARCH_INDEX_CACHE_MB: '' })).toMatchObject({
      pipeline: { concurrency: PIPELINE_DEFAULTS.concurrency }, worker: true, logLevel: 'info', caches: { searchIndexBytes: 256 * 2 ** 20 },
    });
  });

  it('leaves variables it does not know alone', () => {
    expect(() => load({ SOMETHING_ELSE: 'abc', THINKING_HARDER: 'yes', PIPELINE: 'x' })).not.toThrow();
  });

  describe('stops the load on a malformed value, naming the variable and what it accepts', () => {
    it('whole numbers', () => {
      expect(refusal({ PIPELINE_CONCURRENCY: 'abc' })).toBe('PIPELINE_CONCURRENCY must be a whole number ≥ 1 (got "abc")');
      expect(refusal({ PIPELINE_BATCH_SIZE: '0' })).toBe('PIPELINE_BATCH_SIZE must be a whole number ≥ 1 (got "0")');
      expect(refusal({ PROJECTION_WAIT_MS: '-1' })).toBe('PROJECTION_WAIT_MS must be a whole number ≥ 0 (got "-1")');
      expect(refusal({ QUERY_RETENTION_DAYS: '1.5' })).toBe('QUERY_RETENTION_DAYS must be a whole number ≥ 0 (got "1.5")');
      expect(refusal({ PORT: '70000' })).toBe('PORT must be a whole number from 0 to 65535 (got "70000")');
      const wholeNumbers = [
        'PORT', 'PROJECTION_WAIT_MS', 'READINESS_MAX_LAG', 'BLOB_SWEEP_GRACE_MS', 'SEARCH_VERSION_RETENTION_SECONDS', 'QUERY_RETENTION_DAYS',
        'EMBEDDINGS_DIMENSIONS', 'PIPELINE_CONCURRENCY', 'PIPELINE_BATCH_SIZE', 'PIPELINE_LEASE_MS', 'PIPELINE_MAX_ATTEMPTS', 'PIPELINE_POLL_MS',
        'CHUNK_TOKENS', 'FEEDBACK_RATE_LIMIT', 'FEEDBACK_RATE_WINDOW_SECONDS', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_LEASE_MS', 'WEBHOOK_POLL_MS',
        'WEBHOOK_CONCURRENCY', 'RETRIEVAL_POOL_MIN', 'CONNECTOR_LEASE_MS', 'CONNECTOR_POLL_MS', 'CONNECTOR_SYNC_CONCURRENCY',
      ];
      for (const name of wholeNumbers) {
        for (const bad of ['abc', '-3', '2.5']) expect(refusal({ [name]: bad })).toMatch(new RegExp(`^${name} must be a whole number .*\\(got "${bad}"\\)$`));
      }
    });

    it('sizes in MiB', () => {
      expect(refusal({ BLOB_CACHE_MB: '-64' })).toBe('BLOB_CACHE_MB must be a whole number of MiB ≥ 0 (got "-64")');
      for (const name of ['SEARCH_INDEX_CACHE_MB', 'SEARCH_METADATA_CACHE_MB', 'BLOB_CACHE_MB']) {
        for (const bad of ['lots', '-1', '0.5', '64MB']) expect(refusal({ [name]: bad })).toMatch(new RegExp(`^${name} must be a whole number of MiB`));
      }
    });

    it('numbers in a range', () => {
      expect(refusal({ WEBHOOK_RETRY_JITTER: '1.5' })).toBe('WEBHOOK_RETRY_JITTER must be a number from 0 to 1 (got "1.5")');
      expect(refusal({ RETRIEVAL_POOL_FACTOR: 'x' })).toBe('RETRIEVAL_POOL_FACTOR must be a number from 1 to 20 (got "x")');
      expect(refusal({ THINKING_GRAPH_WEIGHT: '-0.1' })).toBe('THINKING_GRAPH_WEIGHT must be a number ≥ 0 (got "-0.1")');
      expect(refusal({ CONNECTOR_MASS_DELETION_THRESHOLD: '50%' })).toBe('CONNECTOR_MASS_DELETION_THRESHOLD must be a number from 0 to 1 (got "50%")');
      expect(refusal({ CONNECTOR_LEASE_MS: '500' })).toBe('CONNECTOR_LEASE_MS must be a whole number ≥ 1000 (got "500")');
    });

    it('an unknown value of a setting with a fixed set of values', () => {
      expect(refusal({ EMBEDDINGS_PROVIDER: 'bert' })).toBe('EMBEDDINGS_PROVIDER must be one of glove, use, openai (got "bert")');
      expect(refusal({ LOG_LEVEL: 'verbose' })).toBe('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")');
      for (const name of ['WORKER', 'WEBHOOK_ALLOW_LOOPBACK', 'CONNECTOR_ALLOW_PRIVATE_NETWORKS', 'POSTGRES_STAT_STATEMENTS']) {
        for (const bad of ['yes', '1', 'False']) expect(refusal({ [name]: bad })).toBe(`${name} must be true or false (got "${bad}")`);
      }
    });

    it('addresses', () => {
      expect(refusal({ ELASTICSEARCH_URL: 'es:9200' })).toBe('ELASTICSEARCH_URL must be an http:// or https:// URL (got "es:9200")');
      for (const name of ['ELASTICSEARCH_URL', 'EMBEDDINGS_URL', 'LLM_BASE_URL', 'PUBLIC_URL']) {
        for (const bad of ['not a url', 'ftp://host/x']) expect(refusal({ [name]: bad })).toMatch(new RegExp(`^${name} must be an http:// or https:// URL`));
      }
    });

    it('lists of shares and retry schedules', () => {
      expect(refusal({ RETRIEVAL_CONTEXT_AFTER: '0.5,much' })).toBe('RETRIEVAL_CONTEXT_AFTER must be up to 3 comma-separated numbers ≥ 0 (got "0.5,much")');
      expect(refusal({ RETRIEVAL_CONTEXT_BEFORE: '1,1,1,1' })).toMatch(/^RETRIEVAL_CONTEXT_BEFORE must be up to 3/);
      expect(refusal({ WEBHOOK_RETRY_SCHEDULE: '5s,soon' })).toBe('WEBHOOK_RETRY_SCHEDULE must be comma-separated delays in ms, s, m or h, such as 5s,5m,30m,2h (got "5s,soon")');
    });

    it('keys and secrets, without repeating the value', () => {
      for (const name of ['PRESIGNED_URL_KEY', 'WEBHOOK_SECRET_KEY']) {
        const message = refusal({ [name]: 'short-secret' });
        expect(message).toMatch(new RegExp(`^${name} must be 32 bytes: 64 hex characters or base64`));
        expect(message).not.toContain('short-secret');
      }
      const message = refusal({ BOOTSTRAP_API_KEY: 'no-dot-secret-value' });
      expect(message).toMatch(/^BOOTSTRAP_API_KEY must be of the form <prefix>\.<secret>/);
      expect(message).not.toContain('no-dot-secret-value');
    });
  });
});

describe('conversation context weights', () => {
  /** The weights the configuration reads from these variables. */
  const contextWeights = (env: NodeJS.ProcessEnv) => load(env).retrieval.context;

  it('reads RETRIEVAL_CONTEXT_AFTER / _BEFORE and refuses bad values', () => {
    expect(contextWeights({})).toEqual(CONTEXT_DEFAULTS);
    expect(contextWeights({ RETRIEVAL_CONTEXT_AFTER: '0.4', RETRIEVAL_CONTEXT_BEFORE: '0' })).toEqual({ after: [0.4], before: [] });
    expect(contextWeights({ RETRIEVAL_CONTEXT_AFTER: '', RETRIEVAL_CONTEXT_BEFORE: '0.1,0' })).toEqual({ after: [], before: [0.1] });
    expect(() => contextWeights({ RETRIEVAL_CONTEXT_AFTER: 'much' })).toThrow(/RETRIEVAL_CONTEXT_AFTER/);
    expect(() => contextWeights({ RETRIEVAL_CONTEXT_BEFORE: '-1' })).toThrow(/RETRIEVAL_CONTEXT_BEFORE/);
    expect(() => contextWeights({ RETRIEVAL_CONTEXT_AFTER: '1,1,1,1' })).toThrow(/RETRIEVAL_CONTEXT_AFTER/);
  });
});
