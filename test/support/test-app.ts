import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { createApp, type CreatedApp } from '@crs/api/app.factory';
import { DatabaseDirectory } from '@crs/api/databases/database-directory';
import { configFromEnv, type AppConfig } from '@crs/config';
import type { Embedder, VectorSpaces } from '@crs/embeddings';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { IndexingPipeline } from '@crs/indexing/indexing-pipeline';
import type { ApiKeyRepository } from '@crs/persistence/api-keys';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { DatabaseResources } from '@crs/persistence/database-resources';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import type { RateLimiter } from '@crs/persistence/rate-limiter';
import * as tokens from '@crs/platform/tokens';
import type { QueryRetention } from '@crs/processors/query-retention';
import type { SearchCatalog } from '@crs/projections/search-index/search-catalog';
import type { SigningSecretVault } from '@crs/webhooks/signing-secret-vault';
import type { WebhookDispatcher } from '@crs/webhooks/webhook-dispatcher';
import type { WebhookSender } from '@crs/webhooks/webhook-sender';
import type { WebhookUrlGuard } from '@crs/webhooks/webhook-url-guard';
import { createTestDatabase } from './test-database';

export const BOOTSTRAP_KEY = 'crs_testbootstrap.s3cr3t-s3cr3t-s3cr3t-s3cr3t';

export interface TestApp extends CreatedApp {
  config: AppConfig;
  key: string;
  /** Sends a request with the bootstrap key and API-Version 2 unless headers override them. */
  request(method: string, url: string, opts?: { body?: unknown; headers?: Record<string, string>; query?: Record<string, string> }): Promise<{ status: number; body: any; headers: Record<string, any>; raw: string }>;
  /** Creates a database and waits until its four flags are true. */
  createDatabase(name: string, extra?: Record<string, unknown>): Promise<void>;
  /** Any component of the app's platform, by its token (libs/platform/src/tokens.ts). */
  get: CreatedApp['platform']['get'];
  // The components tests reach into, by name: the very instances the app runs on.
  ds: DataSource;
  pool: Pool;
  store: EventStore;
  runner: ProjectionRunner;
  /** the search catalog; `search.index` is the engine */
  search: SearchCatalog;
  directory: DatabaseDirectory;
  keys: ApiKeyRepository;
  rateLimiter: RateLimiter;
  blobs: BlobStore;
  embedder: Embedder;
  vectorSpaces: VectorSpaces;
  resources: DatabaseResources;
  pipeline: IndexingPipeline;
  queryRetention: QueryRetention;
  webhooks: { guard: WebhookUrlGuard; vault: SigningSecretVault; sender: WebhookSender; dispatcher: WebhookDispatcher };
}

/**
 * The production adapters' servers when this run names them (`npm run test:production-adapters` sets both):
 * the e2e suite then runs on EventStoreDB and Elasticsearch instead of the embedded defaults.
 */
export function productionAdapterEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['EVENTSTORE_URL', 'ELASTICSEARCH_URL']) if (process.env[key]) env[key] = process.env[key]!;
  return env;
}

/** A full app (API + in-process worker) on a fresh Postgres database and data directory. */
export async function startTestApp(label: string, overrides: Partial<AppConfig> = {}): Promise<TestApp> {
  const databaseUrl = await createTestDatabase(label);
  const dataDir = mkdtempSync(join(tmpdir(), `crs-${label}-`));
  const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', BOOTSTRAP_API_KEY: BOOTSTRAP_KEY, ...productionAdapterEnv() };
  const config: AppConfig = { ...configFromEnv(env, databaseUrl), ...overrides };
  const created = await createApp(config);
  const request: TestApp['request'] = async (method, url, opts = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${BOOTSTRAP_KEY}`, 'api-version': '2', ...(opts.headers ?? {}) };
    for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
    const res = await created.app.inject({
      method: method as any,
      url,
      query: opts.query,
      headers: opts.body !== undefined && typeof opts.body !== 'string' ? { 'content-type': 'application/json', ...headers } : headers,
      payload: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
    });
    let body: any;
    try {
      body = res.json();
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, body, headers: res.headers, raw: res.body };
  };
  const get = created.platform.get.bind(created.platform);
  const app: TestApp = {
    ...created,
    config,
    key: BOOTSTRAP_KEY,
    request,
    get,
    ds: get(tokens.DATA_SOURCE),
    pool: get(tokens.POSTGRES_POOL),
    store: get(tokens.EVENT_STORE),
    runner: get(tokens.PROJECTION_RUNNER),
    search: get(tokens.SEARCH_CATALOG),
    directory: created.app.get(DatabaseDirectory),
    keys: get(tokens.API_KEYS),
    rateLimiter: get(tokens.RATE_LIMITER),
    blobs: get(tokens.BLOB_STORE),
    embedder: get(tokens.EMBEDDER),
    vectorSpaces: get(tokens.VECTOR_SPACES),
    resources: get(tokens.DATABASE_RESOURCES),
    pipeline: get(tokens.INDEXING_PIPELINE),
    queryRetention: get(tokens.QUERY_RETENTION),
    webhooks: { guard: get(tokens.WEBHOOK_URL_GUARD), vault: get(tokens.SIGNING_SECRET_VAULT), sender: get(tokens.WEBHOOK_SENDER), dispatcher: get(tokens.WEBHOOK_DISPATCHER) },
    async createDatabase(name, extra = {}) {
      const res = await request('POST', '/databases', { body: { database: name, ...extra } });
      if (res.status !== 202) throw new Error(`create database ${name}: ${res.status} ${res.raw}`);
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const st = await request('GET', `/databases/status?database=${encodeURIComponent(name)}`);
        if (st.body?.data?.provisioned) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`database ${name} was not provisioned in time`);
    },
    async close() {
      await created.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return app;
}
