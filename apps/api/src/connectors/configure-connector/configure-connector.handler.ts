import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { SyncRequests } from '@crs/connectors/sync-requests';
import type { ConnectorLifecycle, ConnectorStatus } from '@crs/domain/connectors/connector-status';
import { invalid } from '@crs/domain/errors';
import { CONNECTOR_SYNC_REQUESTS } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { ConnectorStreams } from '../connector-streams';
import { resourceView, type ResourceView } from '../connector-view';
import { resourceInputOf, type ResourceInputDto } from '../resource-input';

export interface ConfigureResult {
  connector_id: string;
  status: ConnectorStatus;
  lifecycle: ConnectorLifecycle;
  resources: ResourceView[];
  sync_requested: boolean;
}

/** Activate (or configure again) resources of a connector and request their sync. */
export class ConfigureConnector extends Command<ConfigureResult> {
  constructor(readonly caller: Caller, readonly connectorId: string, readonly resources: ResourceInputDto[]) {
    super();
  }
}

/**
 * Rule 2: resources not listed are untouched; a listed live resource keeps its cursor, instructions and access rule
 * unless sent, and takes `name`, `resource_type` and the other fields as sent (omitted ones cleared). Every listed
 * resource is decided first; one refusal refuses the request, and the rest are appended in one multi-stream append
 * (all or none) expecting the connector stream's revision. A sync of each listed resource is then requested (the
 * first sync of a new one; a paused connector's too, since a configure's initial sync runs while paused).
 */
@CommandHandler(ConfigureConnector)
export class ConfigureConnectorHandler implements ICommandHandler<ConfigureConnector> {
  constructor(
    private readonly directory: ConnectorDirectory,
    private readonly streams: ConnectorStreams,
    @Inject(CONNECTOR_SYNC_REQUESTS) private readonly syncRequests: SyncRequests,
  ) {}

  async execute({ caller, connectorId, resources }: ConfigureConnector): Promise<ConfigureResult> {
    const c = await this.directory.find(caller, connectorId);
    const inputs = resources.map((r, i) => resourceInputOf(r, c.database.metadataSchema, `resources[${i}]`));
    const seen = new Set<string>();
    for (const input of inputs) {
      if (seen.has(input.resourceId)) throw invalid(`resources lists '${input.resourceId}' more than once`);
      seen.add(input.resourceId);
    }
    const id = c.row.connector_id;
    const decided = await this.streams.decideResources({ ...caller.ctx, databaseId: c.database.id }, id, inputs.map((input) => ({ type: 'ConfigureResource' as const, connectorId: id, ...input })));
    for (const input of inputs) await this.syncRequests.request(id, input.resourceId);
    const after = await this.directory.find(caller, id);
    const view = await this.directory.view(after);
    const rows = new Map((await this.directory.liveResources(id)).map((r) => [r.resource_id, r]));
    return {
      connector_id: id,
      status: view.status,
      lifecycle: view.lifecycle,
      resources: inputs.map((input, i) => resourceView(after, input.resourceId, decided[i].state, rows.get(input.resourceId)?.last_ended_at ?? null)),
      sync_requested: true,
    };
  }
}
