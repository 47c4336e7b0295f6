import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { ConnectorDirectory } from '../connector-directory';
import { ConnectorStreams } from '../connector-streams';
import { resourceView, type ResourceView } from '../connector-view';
import { resourceIdOf } from '../resource-input';

/** Change one resource's instructions or access rule; only what is sent changes. */
export class UpdateResource extends Command<ResourceView> {
  constructor(readonly caller: Caller, readonly connectorId: string, readonly resourceId: string, readonly input: { customInstructions?: string; acl?: string[] | null }) {
    super();
  }
}

/**
 * Decided on the resource stream with the connector's revision expected. An access rule applies to the documents
 * already synced from the next query on (rule 14): nothing is re-synced.
 */
@CommandHandler(UpdateResource)
export class UpdateResourceHandler implements ICommandHandler<UpdateResource> {
  constructor(
    private readonly directory: ConnectorDirectory,
    private readonly streams: ConnectorStreams,
  ) {}

  async execute({ caller, connectorId, resourceId, input }: UpdateResource): Promise<ResourceView> {
    const c = await this.directory.find(caller, connectorId);
    const rid = resourceIdOf(resourceId);
    const id = c.row.connector_id;
    const [decided] = await this.streams.decideResources({ ...caller.ctx, databaseId: c.database.id }, id, [
      { type: 'ChangeResourceSettings', connectorId: id, resourceId: rid, customInstructions: input.customInstructions, acl: input.acl },
    ]);
    const row = (await this.directory.liveResources(id)).find((r) => r.resource_id === rid);
    return resourceView(c, rid, decided.state, row?.last_ended_at ?? null);
  }
}
