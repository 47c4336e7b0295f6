import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { createEventStore } from '@crs/eventstore';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { ApiKeyRepository } from '@crs/persistence/api-keys';
import { openDataSource } from '@crs/persistence/data-source';
import type { Subscriber } from '@crs/persistence/projection';
import { lockKey, ProjectionRunner, type RunnerLogger } from '@crs/persistence/projection-runner';
import { RateLimiter } from '@crs/persistence/rate-limiter';
import { databasesProjection } from '@crs/projections/databases/databases.projection';
import { itemsProjection } from '@crs/projections/items/items.projection';
import { itemTombstonesProjection } from '@crs/projections/item-tombstones/item-tombstones.projection';
import { blobRefsProjection } from '@crs/projections/blob-refs/blob-refs.projection';
import { queriesProjection } from '@crs/projections/queries/queries.projection';
import { feedbackProjection } from '@crs/projections/feedback/feedback.projection';
import { webhookOutboxProjection } from '@crs/projections/webhook-outbox/webhook-outbox.projection';
import { openWebhookRuntime, type WebhookRuntime } from '@crs/webhooks/webhook-runtime';
import { graphProjection, GRAPH_TABLES } from '@crs/projections/graph/graph.projection';
import { createEmbedder, PostgresEmbeddingCache, VectorSpaces, type Embedder } from '@crs/embeddings';
import { createSearchIndex } from '@crs/search';
import { BlobRows } from '@crs/persistence/blob-rows';
import { BlobStore } from '@crs/persistence/blob-store';
import { SearchCatalog } from '@crs/projections/search-index/search-catalog';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import { IndexingPipeline } from '@crs/indexing/indexing-pipeline';
import { createInference } from '@crs/ingestion/inference/openai-chat.inference';
import { LateDeliverySweeper } from '@crs/webhooks/late-delivery-sweeper.processor';
import { DerivedMemoryCleaner } from '@crs/processors/derived-memory-cleaner.processor';
import { QueryRetention } from '@crs/processors/query-retention';
import { join } from 'node:path';
import { DatabaseResources } from '@crs/persistence/database-resources';
import { BlobDirectoryContributor, feedbackStreams, GraphTablesContributor, itemStreams, queryStreams } from '@crs/processors/database-resource-contributors';
import { DatabaseLifecycleProcessor } from '@crs/processors/database-lifecycle.processor';
import { DatabaseDirectory } from './databases/database-directory';
import type { AppConfig } from '@crs/config';
import { StepClock } from '@crs/domain/step-clock';

/**
 * Everything with a connection: built once per process and shared by the API, the in-process worker and
 * the CLI (which reuses the same repositories instead of talking HTTP).
 */
export class Infrastructure {
  /** Where /query time goes, per step (exposed on /metrics as crs_query_step_*; docs/observability.md). */
  readonly queryClock = new StepClock();

  private constructor(
    readonly config: AppConfig,
    readonly ds: DataSource,
    readonly pool: Pool,
    readonly store: EventStore,
    readonly keys: ApiKeyRepository,
    readonly rateLimiter: RateLimiter,
    readonly runner: ProjectionRunner,
    readonly directory: DatabaseDirectory,
    readonly resources: DatabaseResources,
    readonly blobs: BlobStore,
    readonly embedder: Embedder,
    /** the configured embedder, and the embedding cache for indexes of another model (a re-embed in progress) */
    readonly vectorSpaces: VectorSpaces,
    readonly search: SearchCatalog,
    readonly pipeline: IndexingPipeline,
    /** URL guard, secret vault, sender and the outbox dispatcher (docs/webhooks.md) */
    readonly webhooks: WebhookRuntime,
    /** removes recorded queries past their retention (docs/operations.md) */
    readonly queryRetention: QueryRetention,
  ) {}

  static async open(config: AppConfig, log: RunnerLogger): Promise<Infrastructure> {
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
      const search = new SearchCatalog(ds, createSearchIndex({
          elasticsearchUrl: config.elasticsearchUrl,
          lanceDir: join(config.dataDir, 'lancedb'),
          lance: { indexCacheBytes: config.caches.searchIndexBytes, metadataCacheBytes: config.caches.searchMetadataBytes, versionRetentionMs: config.searchVersionRetentionMs },
        }));
      await search.init();
      const resources = new DatabaseResources([
        new BlobDirectoryContributor(blobs, ds, config.blobSweepGraceMs),
        new GraphTablesContributor(ds, GRAPH_TABLES),
        search,
        itemStreams(ds),
        queryStreams(ds),
      ]);
      const subscribers: Subscriber[] = [databasesProjection, itemsProjection, itemTombstonesProjection, blobRefsProjection, queriesProjection, graphProjection(blobs), feedbackProjection, webhookOutboxProjection];
      const runner = new ProjectionRunner(ds, store, subscribers, log);
      subscribers.push(new DerivedMemoryCleaner(ds, store, runner), new DatabaseLifecycleProcessor(store, resources, runner, log), new LateDeliverySweeper(ds, store, runner), new SearchIndexSubscriber(ds, search, blobs, vectorSpaces, (p) => runner.waitFor(p, ['items', 'databases'], 30_000), log));
      await runner.migrate();
      await IndexingPipeline.migrate(ds);
      const inference = createInference(config.llm);
      const pipeline = new IndexingPipeline(ds, store, blobs, embedder, inference, runner, log, config.pipeline);
      resources.add(feedbackStreams(ds));
      const webhooks = await openWebhookRuntime({ ds, store, runner, config, log, resources });
      if (config.bootstrapApiKey) await keys.seed('default', config.bootstrapApiKey);
      const queryRetention = new QueryRetention(ds, store, log, { retentionMs: config.queryRetentionMs, everyMs: 10 * 60_000 });
      return new Infrastructure(config, ds, pool, store, keys, rateLimiter, runner, new DatabaseDirectory(ds), resources, blobs, embedder, vectorSpaces, search, pipeline, webhooks, queryRetention);
    } finally {
      await schema.query('SELECT pg_advisory_unlock($1)', [lockKey('schema')]).catch(() => undefined);
      schema.release();
    }
  }

  /** Bytes and entries of every in-memory cache of this process, by name (reported on /metrics). */
  cacheUsage(): Record<string, { bytes: number; entries: number }> {
    const search = this.search.index.cacheUsage?.();
    return { blobs: this.blobs.cacheUsage(), ...(search ? { search_engine: search } : {}) };
  }

  /** Starts projections, processors and the indexing pipeline (the worker role). */
  startWorker(): void {
    this.runner.start();
    this.pipeline.start();
    this.webhooks.dispatcher.start();
    this.queryRetention.start();
  }

  async close(): Promise<void> {
    await this.queryRetention.stop();
    await this.webhooks.dispatcher.stop();
    await this.pipeline.stop();
    await this.runner.stop();
    await this.search.index.close().catch(() => undefined);
    await this.store.close();
    await this.pool.end().catch(() => undefined);
    await this.ds.destroy().catch(() => undefined);
  }
}
