import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { SyncRequests } from '@crs/connectors/sync-requests';
import { connectorNotFound, syncAllowed } from '@crs/domain/connectors/connector.decider';
import { conflict } from '@crs/domain/errors';
import { CONNECTOR_SYNC_REQUESTS } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';

export interface SyncRequestedResult {
  connector_id: string;
  sync_requested: true;
  resources: string[];
  paused: boolean;
}

/** Sync now: a request the scheduler takes, for every configured resource of the connector. */
export class SyncConnector extends Command<SyncRequestedResult> {
  constructor(readonly caller: Caller, readonly connectorId: string) {
    super();
  }
}

/**
 * A manual sync runs on a paused connector too (pause turns scheduled syncs off, not the ones asked for; the
 * decider's `syncAllowed`), and the connector stays paused. A connector without resources has nothing to sync:
 * 409 CONNECTOR_NOT_CONFIGURED (configure first). The request is a nudge, not an event: the syncs it starts are.
 */
@CommandHandler(SyncConnector)
export class SyncConnectorHandler implements ICommandHandler<SyncConnector> {
  constructor(
    private readonly directory: ConnectorDirectory,
    @Inject(CONNECTOR_SYNC_REQUESTS) private readonly syncRequests: SyncRequests,
  ) {}

  async execute({ caller, connectorId }: SyncConnector): Promise<SyncRequestedResult> {
    const c = await this.directory.find(caller, connectorId);
    if (!syncAllowed(c.row.state, 'manual')) throw connectorNotFound(connectorId);
    const resources = await this.directory.liveResources(c.row.connector_id);
    if (resources.length === 0) throw conflict('CONNECTOR_NOT_CONFIGURED', `connector '${connectorId}' has no resources to sync; configure some first (POST /connectors/${connectorId}/configure)`);
    await this.syncRequests.request(c.row.connector_id);
    return { connector_id: c.row.connector_id, sync_requested: true, resources: resources.map((r) => r.resource_id), paused: c.row.state.paused };
  }
}
