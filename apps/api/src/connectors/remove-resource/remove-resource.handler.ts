import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { ContentPolicy } from '@crs/domain/connectors/connector.events';
import { DEFAULT_CONTENT_POLICY } from '@crs/domain/connectors/connector.events';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { ConnectorStreams } from '../connector-streams';
import { resourceIdOf } from '../resource-input';

export interface ResourceRemovedResult {
  connector_id: string;
  resource_id: string;
  removed: true;
  content: ContentPolicy;
}

/** Stop syncing a resource; its synced documents are deleted (`delete`, the default) or kept (`keep`). */
export class RemoveResource extends Command<ResourceRemovedResult> {
  constructor(readonly caller: Caller, readonly connectorId: string, readonly resourceId: string, readonly content?: ContentPolicy) {
    super();
  }
}

/**
 * Appends `ResourceRemoved` with the policy: from then on the resource is not listed or synced. Deleting its synced
 * documents (an `ItemDeleted` on each) is the sync engine's processor's work, after this answer.
 */
@CommandHandler(RemoveResource)
export class RemoveResourceHandler implements ICommandHandler<RemoveResource> {
  constructor(
    private readonly directory: ConnectorDirectory,
    private readonly streams: ConnectorStreams,
  ) {}

  async execute({ caller, connectorId, resourceId, content }: RemoveResource): Promise<ResourceRemovedResult> {
    const c = await this.directory.find(caller, connectorId);
    const rid = resourceIdOf(resourceId);
    const contentPolicy = content ?? DEFAULT_CONTENT_POLICY;
    const id = c.row.connector_id;
    await this.streams.decideResources({ ...caller.ctx, databaseId: c.database.id }, id, [{ type: 'RemoveResource', connectorId: id, resourceId: rid, contentPolicy }]);
    return { connector_id: id, resource_id: rid, removed: true, content: contentPolicy };
  }
}
