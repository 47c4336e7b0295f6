import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { resourceView, type ResourceView } from '../connector-view';

/** Each live resource's settings (`custom_instructions` absent when inherited), status and lifecycle. */
export class ListResources extends Query<{ connector_id: string; resources: ResourceView[] }> {
  constructor(readonly caller: Caller, readonly connectorId: string) {
    super();
  }
}

@QueryHandler(ListResources)
export class ListResourcesHandler implements IQueryHandler<ListResources> {
  constructor(private readonly directory: ConnectorDirectory) {}

  async execute({ caller, connectorId }: ListResources): Promise<{ connector_id: string; resources: ResourceView[] }> {
    const c = await this.directory.find(caller, connectorId);
    const resources = await this.directory.liveResources(c.row.connector_id);
    return { connector_id: c.row.connector_id, resources: resources.map((r) => resourceView(c, r.resource_id, r.state, r.last_ended_at)) };
  }
}
