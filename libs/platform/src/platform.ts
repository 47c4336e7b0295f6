import { join } from 'node:path';
import type { Provider } from '@nestjs/common';
import { Pool } from 'pg';
import type { AppConfig } from '@crs/config';
import { StepClock } from '@crs/domain/step-clock';
import { createEmbedder, PostgresEmbeddingCache, VectorSpaces } from '@crs/embeddings';
import { createEventStore } from '@crs/eventstore';
import { createInference } from '@crs/ingestion/inference/openai-chat.inference';
import { IndexingPipeline } from '@crs/indexing/indexing-pipeline';
import { ApiKeyRepository } from '@crs/persistence/api-keys';
import { BlobRows } from '@crs/persistence/blob-rows';
import { BlobStore } from '@crs/persistence/blob-store';
import { DatabaseResources } from '@crs/persistence/database-resources';
import { openDataSource } from '@crs/persistence/data-source';
import type { Subscriber } from '@crs/persistence/projection';
import { lockKey, ProjectionRunner, type RunnerLogger } from '@crs/persistence/projection-runner';
import { RateLimiter } from '@crs/persistence/rate-limiter';
import { DatabaseLifecycleProcessor } from '@crs/processors/database-lifecycle.processor';
import { BlobDirectoryContributor, feedbackStreams, GraphTablesContributor, itemStreams, queryStreams } from '@crs/processors/database-resource-contributors';
import { DerivedMemoryCleaner } from '@crs/processors/derived-memory-cleaner.processor';
import { QueryRetention } from '@crs/processors/query-retention';
import { blobRefsProjection } from '@crs/projections/blob-refs/blob-refs.projection';
import { connectorsProjection } from '@crs/projections/connectors/connectors.projection';
import { ConnectorCredentialVault, CONNECTOR_KEY_FILE_NAME } from '@crs/connectors/credential-vault';
import { ProviderRegistry } from '@crs/connectors/provider-registry';
import { ConfluenceProvider } from '@crs/connectors/providers/confluence/confluence.provider';
import { GoogleDriveProvider } from '@crs/connectors/providers/google-drive/google-drive.provider';
import { JiraProvider } from '@crs/connectors/providers/jira/jira.provider';
import { PostgresProvider } from '@crs/connectors/providers/postgres/postgres.provider';
import { GitHubProvider } from '@crs/connectors/providers/github/github.provider';
import { SlackProvider } from '@crs/connectors/providers/slack/slack.provider';
import { SyncRequests } from '@crs/connectors/sync-requests';
import { ConnectorDeletionProcessor } from '@crs/connector-sync/connector-deletion.processor';
import { ConnectorScheduler } from '@crs/connector-sync/connector-scheduler';
import { ConnectorLeases } from '@crs/connector-sync/connector-leases';
import { PruneHolds } from '@crs/connector-sync/prune-holds';
import { ResourceSync } from '@crs/connector-sync/resource-sync';
import { databasesProjection } from '@crs/projections/databases/databases.projection';
import { feedbackProjection } from '@crs/projections/feedback/feedback.projection';
import { graphProjection, GRAPH_TABLES } from '@crs/projections/graph/graph.projection';
import { itemTombstonesProjection } from '@crs/projections/item-tombstones/item-tombstones.projection';
import { itemsProjection } from '@crs/projections/items/items.projection';
import { queriesProjection } from '@crs/projections/queries/queries.projection';
import { SearchCatalog } from '@crs/projections/search-index/search-catalog';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import { webhookOutboxProjection } from '@crs/projections/webhook-outbox/webhook-outbox.projection';
import { createSearchIndex } from '@crs/search';
import { LateDeliverySweeper } from '@crs/webhooks/late-delivery-sweeper.processor';
import { openWebhookRuntime } from '@crs/webhooks/webhook-runtime';
import * as tokens from './tokens';
import type { Token } from './tokens';

/**
 * Every port and component of one process (API, worker or `crs`), opened and wired once at start: classes receive
 * them through their constructors by token (tokens.ts), through PlatformModule in Nest, or `get` in the CLI and tests.
 */
export class Platform {
  /** Built by openPlatform. */
  constructor(private readonly components: ReadonlyMap<string, unknown>) {}

  get<T>(token: Token<T>): T {
    if (!this.components.has(token)) throw new Error(`the platform provides no ${token}`);
    return this.components.get(token) as T;
  }

  /** One Nest provider per token (PlatformModule). */
  providers(): Provider[] {
    return [...this.components].map(([token, value]) => ({ provide: token, useValue: value }));
  }

  /** Starts projections, processors and the indexing pipeline (the worker role). */
  startWorker(): void {
    this.get(tokens.PROJECTION_RUNNER).start();
    this.get(tokens.INDEXING_PIPELINE).start();
    this.get(tokens.WEBHOOK_DISPATCHER).start();
    this.get(tokens.QUERY_RETENTION).start();
    this.get(tokens.CONNECTOR_SCHEDULER).start();
  }

  async close(): Promise<void> {
    await this.get(tokens.CONNECTOR_SCHEDULER).stop();
    await this.get(tokens.QUERY_RETENTION).stop();
    await this.get(tokens.WEBHOOK_DISPATCHER).stop();
    await this.get(tokens.INDEXING_PIPELINE).stop();
    await this.get(tokens.PROJECTION_RUNNER).stop();
    await this.get(tokens.SEARCH_INDEX).close().catch(() => undefined);
    await this.get(tokens.EVENT_STORE).close();
    await this.get(tokens.POSTGRES_POOL).end().catch(() => undefined);
    await this.get(tokens.DATA_SOURCE).destroy().catch(() => undefined);
  }
}

/**
 * Opens Postgres and the event log, creates the adapters, and creates or migrates every table (under the schema
 * advisory lock), then wires the projections and processors. Nothing runs until `startWorker`.
 */
export async function openPlatform(config: AppConfig, log: RunnerLogger): Promise<Platform> {
  const ds = await openDataSource(config.databaseUrl, { name: 'crs' });
  const pool = new Pool({ connectionString: config.databaseUrl, max: 20, application_name: 'crs-events' });
  // An idle client whose connection dies (Postgres restarting or shutting down first) is dropped by the pool and
  // replaced on next use; without a listener the 'error' event would crash the process.
  pool.on('error', (err) => log.error({ err: err.message }, 'idle event-store connection lost'));
  // Creating and migrating tables is serialized across processes (a service and `crs` commands starting together):
  // concurrent DDL on one table fails in Postgres ("tuple concurrently updated").
  const schema = await pool.connect();
  await schema.query('SELECT pg_advisory_lock($1)', [lockKey('schema')]);
  try {
    const store = await createEventStore({ eventstoreUrl: config.eventstoreUrl, pool });
    const keys = new ApiKeyRepository(ds);
    await keys.init();
    const rateLimiter = new RateLimiter(ds);
    await rateLimiter.init();
    const blobRows = new BlobRows(pool);
    await blobRows.init();
    const blobs = new BlobStore(join(config.dataDir, 'blobs'), { cacheBytes: config.caches.blobBytes, rows: blobRows, rowMaxBytes: config.blobRowMaxBytes });
    const cache = new PostgresEmbeddingCache(pool);
    await cache.init();
    const embedder = createEmbedder({ ...config.embeddings, cache });
    const vectorSpaces = new VectorSpaces(embedder, cache);
    config = { ...config, embedder: { modelId: embedder.modelId, dimensions: embedder.dimensions } };
    const search = new SearchCatalog(
      ds,
      createSearchIndex({
        elasticsearchUrl: config.elasticsearchUrl,
        lanceDir: join(config.dataDir, 'lancedb'),
        lance: {
          indexCacheBytes: config.caches.searchIndexBytes,
          metadataCacheBytes: config.caches.searchMetadataBytes,
          residentCacheBytes: config.caches.searchResidentBytes,
          residentMaxRows: config.caches.searchResidentMaxRows,
          versionRetentionMs: config.searchVersionRetentionMs,
        },
      }),
    );
    await search.init();
    const resources = new DatabaseResources([
      new BlobDirectoryContributor(blobs, ds, config.blobSweepGraceMs),
      new GraphTablesContributor(ds, GRAPH_TABLES),
      search,
      itemStreams(ds),
      queryStreams(ds),
    ]);
    const subscribers: Subscriber[] = [databasesProjection, itemsProjection, itemTombstonesProjection, blobRefsProjection, queriesProjection, graphProjection(blobs), feedbackProjection, webhookOutboxProjection, connectorsProjection];
    const runner = new ProjectionRunner(ds, store, subscribers, log);
    subscribers.push(new DerivedMemoryCleaner(ds, store, runner), new DatabaseLifecycleProcessor(store, resources, runner, log), new LateDeliverySweeper(ds, store, runner), new SearchIndexSubscriber(ds, search, blobs, vectorSpaces, (p) => runner.waitFor(p, ['items', 'databases'], 30_000), log));
    await runner.migrate();
    await IndexingPipeline.migrate(ds);
    const inference = createInference(config.llm);
    const pipeline = new IndexingPipeline(ds, store, blobs, embedder, inference, runner, log, config.pipeline);
    resources.add(feedbackStreams(ds));
    const webhooks = await openWebhookRuntime({ ds, store, runner, config, log, resources });
    const connectorCredentials = new ConnectorCredentialVault(ds, config.connectors.secretKey, join(config.dataDir, CONNECTOR_KEY_FILE_NAME));
    await connectorCredentials.init();
    const syncRequests = new SyncRequests(ds);
    await syncRequests.init();
    const providers = new ProviderRegistry([
      new PostgresProvider({ ownDatabases: [config.databaseUrl], allowPrivateNetworks: config.connectors.allowPrivateNetworks }),
      new GitHubProvider({ allowPrivateNetworks: config.connectors.allowPrivateNetworks }),
      new SlackProvider({ allowPrivateNetworks: config.connectors.allowPrivateNetworks }),
      new ConfluenceProvider({ allowPrivateNetworks: config.connectors.allowPrivateNetworks }),
      new JiraProvider({ allowPrivateNetworks: config.connectors.allowPrivateNetworks }),
      new GoogleDriveProvider({ allowPrivateNetworks: config.connectors.allowPrivateNetworks }),
    ]);
    const pruneHolds = new PruneHolds(ds);
    await pruneHolds.init();
    const connectorLeases = new ConnectorLeases(ds);
    await connectorLeases.init();
    subscribers.push(new ConnectorDeletionProcessor(ds, store, runner, connectorCredentials, syncRequests, pruneHolds, pipeline));
    const connectorSync = new ResourceSync({
      sql: ds,
      store,
      blobs,
      providers,
      credentials: connectorCredentials,
      holds: pruneHolds,
      leases: connectorLeases,
      pipeline,
      log,
      clock: () => new Date(),
      settings: { leaseMs: config.connectors.leaseMs, massDeletionThreshold: config.connectors.massDeletionThreshold },
    });
    const connectorScheduler = new ConnectorScheduler(ds, syncRequests, connectorSync, log, { concurrency: config.connectors.syncConcurrency, pollMs: config.connectors.pollMs });
    if (config.bootstrapApiKey) await keys.seed('default', config.bootstrapApiKey);
    const queryRetention = new QueryRetention(ds, store, log, { retentionMs: config.queryRetentionMs, everyMs: 10 * 60_000 });
    return new Platform(
      new Map<string, unknown>([
        [tokens.APP_CONFIG, config],
        [tokens.DATA_SOURCE, ds],
        [tokens.POSTGRES_POOL, pool],
        [tokens.EVENT_STORE, store],
        [tokens.PROJECTION_RUNNER, runner],
        [tokens.API_KEYS, keys],
        [tokens.RATE_LIMITER, rateLimiter],
        [tokens.BLOB_STORE, blobs],
        [tokens.EMBEDDER, embedder],
        [tokens.VECTOR_SPACES, vectorSpaces],
        [tokens.SEARCH_CATALOG, search],
        [tokens.SEARCH_INDEX, search.index],
        [tokens.DATABASE_RESOURCES, resources],
        [tokens.INDEXING_PIPELINE, pipeline],
        [tokens.WEBHOOK_URL_GUARD, webhooks.guard],
        [tokens.SIGNING_SECRET_VAULT, webhooks.vault],
        [tokens.WEBHOOK_SENDER, webhooks.sender],
        [tokens.WEBHOOK_DISPATCHER, webhooks.dispatcher],
        [tokens.QUERY_RETENTION, queryRetention],
        [tokens.QUERY_STEP_CLOCK, new StepClock()],
        [tokens.CONNECTOR_PROVIDERS, providers],
        [tokens.CONNECTOR_CREDENTIALS, connectorCredentials],
        [tokens.CONNECTOR_SYNC_REQUESTS, syncRequests],
        [tokens.CONNECTOR_SYNC, connectorSync],
        [tokens.CONNECTOR_SCHEDULER, connectorScheduler],
      ]),
    );
  } finally {
    await schema.query('SELECT pg_advisory_unlock($1)', [lockKey('schema')]).catch(() => undefined);
    schema.release();
  }
}
