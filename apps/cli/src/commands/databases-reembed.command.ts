import type { Command } from 'commander';
import { BLOB_STORE, DATA_SOURCE, EMBEDDER, EVENT_STORE, PROJECTION_RUNNER, SEARCH_CATALOG, VECTOR_SPACES } from '@crs/platform';
import { organizationOfDatabase } from '@crs/projections/databases/databases.queries';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import type { CliContext } from '../cli-context';
import { databaseIdOf } from '../database-argument';
import { positionsBar } from '../progress';
import { reembedDatabase } from '../reembed-database';

/** `crs databases reembed <database>`: moves a database to this process's embedder. */
export function databasesReembed(databases: Command, cli: CliContext): void {
  databases
    .command('reembed <database>')
    .description("move a database to this process's embedder (EMBEDDINGS_PROVIDER...): rebuild its indexes with it, requeue items that errored with EMBEDDER_MISMATCH")
    .option('--org <org>', 'organization (to resolve the database by name)', 'default')
    .action(async (database: string, o: { org: string }) => {
      const platform = await cli.platform();
      const ds = platform.get(DATA_SOURCE);
      const store = platform.get(EVENT_STORE);
      const runner = platform.get(PROJECTION_RUNNER);
      const search = platform.get(SEARCH_CATALOG);
      const databaseId = await databaseIdOf(ds, { database, org: o.org });
      const orgId = await organizationOfDatabase(ds, databaseId);
      if (orgId === undefined) throw new Error(`database ${database} not found`);
      // The read models must follow the change while this runs (a running service does it too; runs are safe side by side).
      runner.start((s) => s.kind === 'read-model');
      const bar = positionsBar(cli.io, 'reembed');
      bar?.start(Math.max(1, await store.headPosition()), 0);
      const r = await reembedDatabase(
        { ds, store, runner, catalog: search, subscriber: new SearchIndexSubscriber(ds, search, platform.get(BLOB_STORE), platform.get(VECTOR_SPACES)), embedder: platform.get(EMBEDDER) },
        { id: databaseId, orgId },
        { orgId, actor: 'cli' },
        (p, head) => {
          bar?.setTotal(Math.max(1, head));
          bar?.update(p);
        },
      );
      bar?.stop();
      if (!r.changed) cli.io.out(`${database}: already embeds with ${r.embedder.modelId} (${r.embedder.dimensions} dimensions); nothing to do`);
      else cli.io.out(`${database}: ${r.previous.modelId} (${r.previous.dimensions}) -> ${r.embedder.modelId} (${r.embedder.dimensions}); rebuilt ${r.indexes} index(es) from ${r.events} events, requeued ${r.requeued} item(s), ${r.ms} ms`);
    });
}
