import type { Command } from 'commander';
import { CONNECTOR_SYNC_REQUESTS, DATA_SOURCE } from '@crs/platform';
import { findConnector, findConnectorResource } from '@crs/projections/connectors/connectors.queries';
import type { CliContext } from '../cli-context';

/** `crs connectors sync <connector-id> [--resource <id>]`: asks the scheduler for a sync now (as POST /connectors/{id}/sync). */
export function connectorsSync(connectors: Command, cli: CliContext): void {
  connectors
    .command('sync')
    .description('sync a connector (or one of its resources) now: the worker takes the request')
    .argument('<connector-id>')
    .option('--resource <resource-id>', 'only this resource')
    .option('--org <org>', 'the organization', 'default')
    .action(async (connectorId: string, o: { resource?: string; org: string }) => {
      const platform = await cli.platform();
      const ds = platform.get(DATA_SOURCE);
      const c = await findConnector(ds, o.org, connectorId);
      const live = c?.state.phase === 'live';
      const resource = o.resource === undefined || (live && (await findConnectorResource(ds, connectorId, o.resource))?.phase === 'live');
      if (!live || !resource) {
        cli.io.err(live ? `connector '${connectorId}' has no resource '${o.resource}'` : `no connector '${connectorId}' in organization '${o.org}'`);
        cli.exitCode = 1;
        return;
      }
      await platform.get(CONNECTOR_SYNC_REQUESTS).request(connectorId, o.resource ?? null);
      cli.io.out(`sync requested for connector ${connectorId}${o.resource ? `, resource ${o.resource}` : ''}`);
    });
}
