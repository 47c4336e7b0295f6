import type { Command } from 'commander';
import { DATA_SOURCE } from '@crs/platform';
import { findConnector, resourceSyncs } from '@crs/projections/connectors/connectors.queries';
import type { CliContext } from '../cli-context';
import { wholeNumber } from '../whole-number';

/** `crs connectors log <connector-id> <resource-id> [--limit N]`: the resource's syncs, newest first, one JSON line each. */
export function connectorsLog(connectors: Command, cli: CliContext): void {
  connectors
    .command('log')
    .description("a resource's syncs, newest first: trigger, start, end, outcome, counts, error")
    .argument('<connector-id>')
    .argument('<resource-id>')
    .option('--limit <n>', 'at most this many', wholeNumber('--limit'), '20')
    .option('--org <org>', 'the organization', 'default')
    .action(async (connectorId: string, resourceId: string, o: { limit: string; org: string }) => {
      const limit = Number(o.limit);
      const ds = (await cli.platform()).get(DATA_SOURCE);
      if (!(await findConnector(ds, o.org, connectorId))) {
        cli.io.err(`no connector '${connectorId}' in organization '${o.org}'`);
        cli.exitCode = 1;
        return;
      }
      for (const s of await resourceSyncs(ds, connectorId, resourceId, limit)) {
        cli.io.out(JSON.stringify({ sync_id: s.sync_id, generation: s.generation, trigger: s.trigger, started_at: s.started_at, ended_at: s.ended_at, outcome: s.outcome, counts: s.counts, detail: s.detail }));
      }
    });
}
