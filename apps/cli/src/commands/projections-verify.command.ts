import type { Command } from 'commander';
import { verifyProjection } from '@crs/persistence/projection-verifier';
import { APP_CONFIG, BLOB_STORE, DATA_SOURCE, EVENT_STORE, PROJECTION_RUNNER, SEARCH_CATALOG, VECTOR_SPACES } from '@crs/platform';
import { verifySearchIndex } from '@crs/projections/search-index/search-index-rebuild';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import type { CliContext } from '../cli-context';
import { readModelTargets, SEARCH_INDEX } from '../read-model-targets';

/** `crs projections verify <name|all>`: a shadow rebuild compared with the live read model; exit code 1 unless equal. */
export function projectionsVerify(projections: Command, cli: CliContext): void {
  projections
    .command('verify <name>')
    .description('rebuild into a shadow schema and compare with the live read model')
    .action(async (name: string) => {
      const platform = await cli.platform();
      const runner = platform.get(PROJECTION_RUNNER);
      const ds = platform.get(DATA_SOURCE);
      for (const n of readModelTargets(runner, name)) {
        if (n === SEARCH_INDEX) {
          const search = platform.get(SEARCH_CATALOG);
          const r = await verifySearchIndex(platform.get(EVENT_STORE), search, new SearchIndexSubscriber(ds, search, platform.get(BLOB_STORE), platform.get(VECTOR_SPACES)));
          if (r.equal) cli.io.out(`${n}: equal at position ${r.position} (${r.indexes.map((x) => `${x.key} ${x.chunks} chunks`).join(', ') || 'no indexes'})`);
          else if (r.behind) {
            cli.exitCode = 1;
            cli.io.out(
              `${n}: NOT COMPARED: the live search index has handled the log up to position ${r.behind.indexedTo}, the head is ${r.position} ` +
                `(the first event it has yet to handle is at ${r.behind.pending}). Is the service running? Run verify again once it has caught up.`,
            );
          } else {
            cli.exitCode = 1;
            const d = r.firstDifference!;
            cli.io.out(`${n}: DIFFERENT at position ${r.position}: first difference in ${d.index} chunk ${d.chunkId}\n  live:    ${d.live?.slice(0, 300)}\n  rebuilt: ${d.rebuilt?.slice(0, 300)}`);
            if (r.unsettled) cli.io.out(`  (writes were arriving: ${r.unsettled.appended} events appended during the last of 3 comparisons; the index keeps an item's latest attributes, so run verify again once they stop)`);
          }
          continue;
        }
        const r = await verifyProjection(runner, ds, platform.get(APP_CONFIG).databaseUrl, n);
        if (r.equal) cli.io.out(`${n}: equal at position ${r.position} (${r.tables.map((t) => `${t.table} ${t.rows} rows ${t.live}`).join(', ')})`);
        else {
          cli.exitCode = 1;
          const d = r.firstDifference!;
          cli.io.out(`${n}: DIFFERENT at position ${r.position}: first difference in ${d.table} row ${d.index}\n  live:    ${d.live}\n  rebuilt: ${d.rebuilt}`);
        }
      }
    });
}
