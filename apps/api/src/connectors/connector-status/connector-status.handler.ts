import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { connectorStatus, type ConnectorLifecycle, type ConnectorStatus } from '@crs/domain/connectors/connector-status';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { resourceView, type LastSyncView, type ResourceLifecycle } from '../connector-view';

export interface ResourceStatusView {
  resource_id: string;
  name: string;
  status: ConnectorStatus;
  status_reason: string | null;
  lifecycle: ResourceLifecycle;
  syncing: boolean;
  last_sync: LastSyncView | null;
}

export interface ConnectorStatusResult {
  connector_id: string;
  status: ConnectorStatus;
  status_reason: string | null;
  lifecycle: ConnectorLifecycle;
  paused: boolean;
  resources: ResourceStatusView[];
}

/** The connector's health and lifecycle, and each live resource's (derived from the folded states, never stored). */
export class GetConnectorStatus extends Query<ConnectorStatusResult> {
  constructor(readonly caller: Caller, readonly connectorId: string) {
    super();
  }
}

@QueryHandler(GetConnectorStatus)
export class GetConnectorStatusHandler implements IQueryHandler<GetConnectorStatus> {
  constructor(private readonly directory: ConnectorDirectory) {}

  async execute({ caller, connectorId }: GetConnectorStatus): Promise<ConnectorStatusResult> {
    const c = await this.directory.find(caller, connectorId);
    const resources = await this.directory.liveResources(c.row.connector_id);
    const verdict = connectorStatus(c.row.connector_id, c.row.state, resources.map((r) => r.state));
    return {
      connector_id: c.row.connector_id,
      status: verdict.status,
      status_reason: verdict.reason,
      lifecycle: verdict.lifecycle,
      paused: c.row.state.paused,
      resources: resources.map((r) => {
        const v = resourceView(c, r.resource_id, r.state, r.last_ended_at);
        return { resource_id: v.resource_id, name: v.name, status: v.status, status_reason: v.status_reason, lifecycle: v.lifecycle, syncing: v.syncing, last_sync: v.last_sync };
      }),
    };
  }
}
