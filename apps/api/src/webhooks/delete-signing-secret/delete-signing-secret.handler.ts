import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { findRegistration } from '@crs/projections/webhook-outbox/webhook-outbox.queries';
import { requireOrganizationKey, type Caller } from '../../use-case/caller';
import { WebhookStream } from '../webhook-stream';

export interface DeleteSigningSecretResult {
  deleted: boolean;
  signing_secret_configured: false;
  message: string;
}

/** Remove the organization's signing secret: deliveries stop carrying signature headers. */
export class DeleteSigningSecret extends Command<DeleteSigningSecretResult> {
  constructor(readonly caller: Caller) {
    super();
  }
}

/** Takes a key of the whole organization. Appends the removal (none configured: nothing), then deletes every secret in the vault. */
@CommandHandler(DeleteSigningSecret)
export class DeleteSigningSecretHandler implements ICommandHandler<DeleteSigningSecret> {
  constructor(private readonly stream: WebhookStream, @Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async execute({ caller }: DeleteSigningSecret): Promise<DeleteSigningSecretResult> {
    requireOrganizationKey(caller, 'remove the signing secret');
    const { orgId } = caller.ctx;
    const before = await findRegistration(this.ds, orgId);
    const configured = before !== undefined && before.secret_id !== null;
    await this.stream.decide(caller.ctx, { type: 'RemoveSecret' });
    await this.stream.deleteSecrets(orgId);
    return {
      deleted: configured,
      signing_secret_configured: false,
      message: configured ? 'Signing secret removed; deliveries no longer carry signature headers' : 'No signing secret was configured',
    };
  }
}
