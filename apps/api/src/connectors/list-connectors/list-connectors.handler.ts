import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { connectorView, type ConnectorView } from '../connector-view';

/** The connectors the caller's key may see (those of the databases it reaches), with their sync state. */
export class ListConnectors extends Query<{ connectors: ConnectorView[] }> {
  constructor(readonly caller: Caller, readonly database?: string) {
    super();
  }
}

@QueryHandler(ListConnectors)
export class ListConnectorsHandler implements IQueryHandler<ListConnectors> {
  constructor(private readonly directory: ConnectorDirectory) {}

  async execute({ caller, database }: ListConnectors): Promise<{ connectors: ConnectorView[] }> {
    const { connectors, resources } = await this.directory.list(caller, database);
    const views = await Promise.all(
      connectors.map(async (c) => connectorView(c, resources.get(c.row.connector_id) ?? [], await this.directory.credentialFieldNames(c.row.org_id, c.settings.credentialsId))),
    );
    return { connectors: views };
  }
}
