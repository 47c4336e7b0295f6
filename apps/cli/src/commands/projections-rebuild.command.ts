import type { Command } from 'commander';
import { BLOB_STORE, DATA_SOURCE, EVENT_STORE, PROJECTION_RUNNER, SEARCH_CATALOG, VECTOR_SPACES } from '@crs/platform';
import { rebuildSearchIndex } from '@crs/projections/search-index/search-index-rebuild';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import type { CliContext } from '../cli-context';
import { positionsBar } from '../progress';
import { readModelTargets, SEARCH_INDEX } from '../read-model-targets';

/** `crs projections rebuild <name|all>`: each read model from the whole log, atomically; the search index by generation swap. */
export function projectionsRebuild(projections: Command, cli: CliContext): void {
  projections
    .command('rebuild <name>')
    .description('rebuild a read model (or all) from the whole log, atomically')
    .action(async (name: string) => {
      const platform = await cli.platform();
      const runner = platform.get(PROJECTION_RUNNER);
      const store = platform.get(EVENT_STORE);
      for (const n of readModelTargets(runner, name)) {
        if (n === SEARCH_INDEX) {
          const search = platform.get(SEARCH_CATALOG);
          const r = await rebuildSearchIndex(store, search, new SearchIndexSubscriber(platform.get(DATA_SOURCE), search, platform.get(BLOB_STORE), platform.get(VECTOR_SPACES)));
          cli.io.out(`${n}: rebuilt ${r.indexes} index(es) from ${r.events} events up to position ${r.position} in ${r.ms} ms (${Math.round((r.events / Math.max(1, r.ms)) * 1000)} events/s)`);
          continue;
        }
        const bar = positionsBar(cli.io, n.padEnd(20));
        bar?.start(Math.max(1, await store.headPosition()), 0);
        const r = await runner.rebuild(n, (p, head) => {
          bar?.setTotal(Math.max(1, head));
          bar?.update(p);
        });
        bar?.stop();
        cli.io.out(`${n}: rebuilt from ${r.events} events up to position ${r.position} in ${r.ms} ms (${Math.round((r.events / Math.max(1, r.ms)) * 1000)} events/s)`);
      }
    });
}
