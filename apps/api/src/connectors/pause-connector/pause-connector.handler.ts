import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { ConnectorStreams } from '../connector-streams';
import type { ConnectorView } from '../connector-view';

/** Pause the connector's scheduled syncs (manual ones still run); repeating it changes nothing. */
export class PauseConnector extends Command<ConnectorView> {
  constructor(readonly caller: Caller, readonly connectorId: string) {
    super();
  }
}

@CommandHandler(PauseConnector)
export class PauseConnectorHandler implements ICommandHandler<PauseConnector> {
  constructor(
    private readonly directory: ConnectorDirectory,
    private readonly streams: ConnectorStreams,
  ) {}

  async execute({ caller, connectorId }: PauseConnector): Promise<ConnectorView> {
    const c = await this.directory.find(caller, connectorId);
    await this.streams.decideConnector({ ...caller.ctx, databaseId: c.database.id }, c.row.connector_id, [{ type: 'Pause', connectorId: c.row.connector_id }]);
    return this.directory.view(await this.directory.find(caller, c.row.connector_id));
  }
}
