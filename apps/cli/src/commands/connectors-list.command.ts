import type { Command } from 'commander';
import { connectorStatus } from '@crs/domain/connectors/connector-status';
import { DATA_SOURCE } from '@crs/platform';
import { listConnectors, resourcesOfConnectors } from '@crs/projections/connectors/connectors.queries';
import type { CliContext } from '../cli-context';

/** `crs connectors list [--org <org>]`: one JSON line per connector with its status and lifecycle (never credentials). */
export function connectorsList(connectors: Command, cli: CliContext): void {
  connectors
    .command('list')
    .description('the connectors of an organization, with status, lifecycle and resource count')
    .option('--org <org>', 'the organization', 'default')
    .action(async (o: { org: string }) => {
      const ds = (await cli.platform()).get(DATA_SOURCE);
      const rows = await listConnectors(ds, o.org, null);
      const resources = rows.length ? await resourcesOfConnectors(ds, rows.map((r) => r.connector_id)) : [];
      for (const c of rows) {
        const mine = resources.filter((r) => r.connector_id === c.connector_id);
        const s = connectorStatus(c.connector_id, c.state, mine.map((r) => r.state));
        cli.io.out(JSON.stringify({
          connector_id: c.connector_id, provider: c.provider, database_id: c.database_id, status: s.status, lifecycle: s.lifecycle, reason: s.reason,
          resources: mine.filter((r) => r.phase === 'live').length, created_at: c.created_at,
        }));
      }
    });
}
