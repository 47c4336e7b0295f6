import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { findRegistration } from '@crs/projections/webhook-outbox/webhook-outbox.queries';
import { requireOrganizationKey, type Caller } from '../../use-case/caller';
import { WebhookStream } from '../webhook-stream';

/** Delete the organization's indexing webhook and its signing secret; `deleted` says whether one was registered. */
export class DeleteWebhook extends Command<{ deleted: boolean; message: string }> {
  constructor(readonly caller: Caller) {
    super();
  }
}

/** Takes a key of the whole organization. Appends the deletion (again: nothing), then deletes every secret in the vault. */
@CommandHandler(DeleteWebhook)
export class DeleteWebhookHandler implements ICommandHandler<DeleteWebhook> {
  constructor(private readonly stream: WebhookStream, @Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async execute({ caller }: DeleteWebhook): Promise<{ deleted: boolean; message: string }> {
    requireOrganizationKey(caller, 'delete the webhook');
    const { orgId } = caller.ctx;
    const before = await findRegistration(this.ds, orgId);
    await this.stream.decide(caller.ctx, { type: 'Delete' });
    await this.stream.deleteSecrets(orgId);
    return before
      ? { deleted: true, message: 'Webhook registration and its signing secret deleted; no further deliveries will be sent' }
      : { deleted: false, message: 'No webhook was registered' };
  }
}
