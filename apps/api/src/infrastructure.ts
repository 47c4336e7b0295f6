import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { createEventStore } from '../../../libs/eventstore/src';
import type { EventStore } from '../../../libs/eventstore/src/event-store.port';
import { ApiKeyRepository } from '../../../libs/persistence/src/api-keys';
import { openDataSource } from '../../../libs/persistence/src/data-source';
import type { Subscriber } from '../../../libs/persistence/src/projection';
import { ProjectionRunner, type RunnerLogger } from '../../../libs/persistence/src/projection-runner';
import { RateLimiter } from '../../../libs/persistence/src/rate-limiter';
import { databasesProjection } from '../../../projections/databases/databases.projection';
import { BlobDirectoryContributor, DatabaseResources, GraphTablesContributor } from '../../worker/src/database-resources';
import { DatabaseLifecycleProcessor } from '../../worker/src/processors/database-lifecycle.processor';
import { DatabaseDirectory } from './databases/database-directory';
import type { AppConfig } from './config';

/**
 * Everything with a connection: built once per process and shared by the API, the in-process worker and
 * the CLI (which reuses the same repositories instead of talking HTTP).
 */
export class Infrastructure {
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
  ) {}

  static async open(config: AppConfig, log: RunnerLogger): Promise<Infrastructure> {
    const ds = await openDataSource(config.databaseUrl, { name: 'crs' });
    const pool = new Pool({ connectionString: config.databaseUrl, max: 10, application_name: 'crs-events' });
    const store = await createEventStore({ eventstoreUrl: config.eventstoreUrl, pool });
    const keys = new ApiKeyRepository(ds);
    await keys.init();
    const rateLimiter = new RateLimiter(ds);
    await rateLimiter.init();
    const resources = new DatabaseResources([new BlobDirectoryContributor(config.dataDir), new GraphTablesContributor(ds, [])]);
    const subscribers: Subscriber[] = [databasesProjection];
    const runner = new ProjectionRunner(ds, store, subscribers, log);
    subscribers.push(new DatabaseLifecycleProcessor(store, resources, runner));
    await runner.migrate();
    if (config.bootstrapApiKey) await keys.seed('default', config.bootstrapApiKey);
    return new Infrastructure(config, ds, pool, store, keys, rateLimiter, runner, new DatabaseDirectory(ds), resources);
  }

  async close(): Promise<void> {
    await this.runner.stop();
    await this.store.close();
    await this.pool.end().catch(() => undefined);
    await this.ds.destroy().catch(() => undefined);
  }
}
