import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { ConnectorStreams } from '../connector-streams';
import type { ConnectorView } from '../connector-view';

/** Resume the connector's scheduled syncs (resources not yet synced, or due, sync at the next scheduler pass); repeating it changes nothing. */
export class ResumeConnector extends Command<ConnectorView> {
  constructor(readonly caller: Caller, readonly connectorId: string) {
    super();
  }
}

@CommandHandler(ResumeConnector)
export class ResumeConnectorHandler implements ICommandHandler<ResumeConnector> {
  constructor(
    private readonly directory: ConnectorDirectory,
    private readonly streams: ConnectorStreams,
  ) {}

  async execute({ caller, connectorId }: ResumeConnector): Promise<ConnectorView> {
    const c = await this.directory.find(caller, connectorId);
    await this.streams.decideConnector({ ...caller.ctx, databaseId: c.database.id }, c.row.connector_id, [{ type: 'Resume', connectorId: c.row.connector_id }]);
    return this.directory.view(await this.directory.find(caller, c.row.connector_id));
  }
}
