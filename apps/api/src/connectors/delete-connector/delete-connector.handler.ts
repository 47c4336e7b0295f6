import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { SyncRequests } from '@crs/connectors/sync-requests';
import type { ContentPolicy } from '@crs/domain/connectors/connector.events';
import { DEFAULT_CONTENT_POLICY } from '@crs/domain/connectors/connector.events';
import { CONNECTOR_SYNC_REQUESTS } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { ConnectorStreams } from '../connector-streams';

export interface DeletionRequestedResult {
  connector_id: string;
  deletion_requested: true;
  content: ContentPolicy;
}

/** Remove a connector; its synced documents are deleted (`delete`, the default) or kept (`keep`). */
export class DeleteConnector extends Command<DeletionRequestedResult> {
  constructor(readonly caller: Caller, readonly connectorId: string, readonly content?: ContentPolicy) {
    super();
  }
}

/**
 * Appends `ConnectorDeletionRequested`: from the answer on, the connector is 404 and out of every list, and its
 * pending sync requests are dropped. The rest (an `ItemDeleted` on each synced item under `delete`, deleting the
 * sealed credentials, `ConnectorDeleted`) is the sync engine's processor's work. Repeating the DELETE with the same
 * policy while that runs answers the same; with the other policy, 409 CONNECTOR_DELETING (the first one stands).
 */
@CommandHandler(DeleteConnector)
export class DeleteConnectorHandler implements ICommandHandler<DeleteConnector> {
  constructor(
    private readonly directory: ConnectorDirectory,
    private readonly streams: ConnectorStreams,
    @Inject(CONNECTOR_SYNC_REQUESTS) private readonly syncRequests: SyncRequests,
  ) {}

  async execute({ caller, connectorId, content }: DeleteConnector): Promise<DeletionRequestedResult> {
    const c = await this.directory.find(caller, connectorId, { deleting: true });
    const contentPolicy = content ?? DEFAULT_CONTENT_POLICY;
    const id = c.row.connector_id;
    await this.streams.decideConnector({ ...caller.ctx, databaseId: c.database.id }, id, [{ type: 'RequestDeletion', connectorId: id, contentPolicy }]);
    await this.syncRequests.forget(id);
    return { connector_id: id, deletion_requested: true, content: contentPolicy };
  }
}
