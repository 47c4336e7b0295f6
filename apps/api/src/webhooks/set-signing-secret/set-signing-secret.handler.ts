import { randomUUID } from 'node:crypto';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { invalid } from '@crs/domain/errors';
import { generateSigningSecret } from '@crs/webhooks/webhook-signing';
import { requireOrganizationKey, type Caller } from '../../use-case/caller';
import { booleanField, refuseBothSecretOptions, secretField } from '../webhook-fields';
import { WebhookStream } from '../webhook-stream';

export type SetSigningSecretResult =
  | { signing_secret: string; generated: true; signing_secret_configured: true; message: string }
  | { generated: false; signing_secret_configured: true; message: string };

/** Make a supplied or a generated secret the organization's signing secret. */
export class SetSigningSecret extends Command<SetSigningSecretResult> {
  constructor(readonly caller: Caller, readonly input: { signing_secret?: unknown; generate_signing_secret?: unknown }) {
    super();
  }
}

/**
 * Takes a key of the whole organization. Without a supplied secret one is generated (and answered once); the new
 * secret is sealed in the vault and signs every delivery from the SigningSecretSet event on, deliveries in flight too.
 */
@CommandHandler(SetSigningSecret)
export class SetSigningSecretHandler implements ICommandHandler<SetSigningSecret> {
  constructor(private readonly stream: WebhookStream) {}

  async execute({ caller, input }: SetSigningSecret): Promise<SetSigningSecretResult> {
    requireOrganizationKey(caller, 'set the signing secret');
    const generateFlag = booleanField(input.generate_signing_secret, 'generate_signing_secret');
    const supplied = input.signing_secret ?? undefined;
    refuseBothSecretOptions(generateFlag, supplied);
    if (input.generate_signing_secret === false && supplied === undefined) {
      throw invalid('generate_signing_secret is false and no signing_secret was sent: nothing to set (send signing_secret, or no body to generate one; DELETE removes the secret)');
    }
    const generated = supplied === undefined;
    const secret = generated ? generateSigningSecret() : secretField(supplied);
    const secretId = randomUUID();
    await this.stream.decide(caller.ctx, { type: 'SetSecret', secretId, generated }, { id: secretId, value: secret });
    return generated
      ? { signing_secret: secret, generated: true, signing_secret_configured: true, message: 'Signing secret generated; it is shown only in this response and signs every delivery from now on' }
      : { generated: false, signing_secret_configured: true, message: 'Signing secret set; it signs every delivery from now on' };
  }
}
