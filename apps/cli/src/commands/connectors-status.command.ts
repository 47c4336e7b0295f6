import type { Command } from 'commander';
import { connectorStatus, resourceStatus } from '@crs/domain/connectors/connector-status';
import { DATA_SOURCE } from '@crs/platform';
import { connectorResources, findConnector } from '@crs/projections/connectors/connectors.queries';
import type { CliContext } from '../cli-context';

/** `crs connectors status <connector-id>`: the connector's status, then one line per resource (cursor, running sync, last outcome). */
export function connectorsStatus(connectors: Command, cli: CliContext): void {
  connectors
    .command('status')
    .description("a connector's status and lifecycle, and each resource's")
    .argument('<connector-id>')
    .option('--org <org>', 'the organization', 'default')
    .action(async (connectorId: string, o: { org: string }) => {
      const ds = (await cli.platform()).get(DATA_SOURCE);
      const c = await findConnector(ds, o.org, connectorId);
      if (!c) {
        cli.io.err(`no connector '${connectorId}' in organization '${o.org}'`);
        cli.exitCode = 1;
        return;
      }
      const resources = await connectorResources(ds, c.connector_id);
      const s = connectorStatus(c.connector_id, c.state, resources.map((r) => r.state));
      cli.io.out(JSON.stringify({ connector_id: c.connector_id, provider: c.provider, status: s.status, lifecycle: s.lifecycle, reason: s.reason, paused: c.state.paused }));
      for (const r of resources) {
        const rs = resourceStatus(r.state);
        cli.io.out(JSON.stringify({
          resource_id: r.resource_id, phase: r.phase, generation: r.generation, status: rs.status, reason: rs.reason, cursor: r.state.cursor,
          running_sync: r.running_sync_id, lease_expires_at: r.lease_expires_at, last_outcome: r.state.lastOutcome, retry_at: r.retry_at,
        }));
      }
    });
}
