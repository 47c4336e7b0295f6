import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import type { ConnectorView } from '../connector-view';

/** One connector's settings (credentials masked), status and lifecycle. */
export class GetConnector extends Query<ConnectorView> {
  constructor(readonly caller: Caller, readonly connectorId: string) {
    super();
  }
}

@QueryHandler(GetConnector)
export class GetConnectorHandler implements IQueryHandler<GetConnector> {
  constructor(private readonly directory: ConnectorDirectory) {}

  async execute({ caller, connectorId }: GetConnector): Promise<ConnectorView> {
    return this.directory.view(await this.directory.find(caller, connectorId));
  }
}
