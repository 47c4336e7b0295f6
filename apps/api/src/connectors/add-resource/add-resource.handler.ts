import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { SyncRequests } from '@crs/connectors/sync-requests';
import { CONNECTOR_SYNC_REQUESTS } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { ConnectorStreams } from '../connector-streams';
import { resourceView, type ResourceView } from '../connector-view';
import { resourceInputOf, type ResourceInputDto } from '../resource-input';

/** Add one resource, or replace an existing one whole. */
export class AddResource extends Command<ResourceView & { replaced: boolean }> {
  constructor(readonly caller: Caller, readonly connectorId: string, readonly resource: ResourceInputDto) {
    super();
  }
}

/**
 * On an existing `resource_id` the whole resource is replaced (`ResourceReplaced`): omitted fields are cleared
 * (instructions to none, an access rule it had to `__private__`, rule 13), the generation moves on and the cursor is
 * cleared, so its next sync, requested here, starts from the beginning.
 */
@CommandHandler(AddResource)
export class AddResourceHandler implements ICommandHandler<AddResource> {
  constructor(
    private readonly directory: ConnectorDirectory,
    private readonly streams: ConnectorStreams,
    @Inject(CONNECTOR_SYNC_REQUESTS) private readonly syncRequests: SyncRequests,
  ) {}

  async execute({ caller, connectorId, resource }: AddResource): Promise<ResourceView & { replaced: boolean }> {
    const c = await this.directory.find(caller, connectorId);
    const input = resourceInputOf(resource, c.database.metadataSchema, 'resource');
    const id = c.row.connector_id;
    const [decided] = await this.streams.decideResources({ ...caller.ctx, databaseId: c.database.id }, id, [{ type: 'ReplaceResource', connectorId: id, ...input }]);
    await this.syncRequests.request(id, input.resourceId);
    const after = await this.directory.find(caller, id);
    return { ...resourceView(after, input.resourceId, decided.state, null), replaced: decided.events.some((e) => e.type === 'ResourceReplaced') };
  }
}
