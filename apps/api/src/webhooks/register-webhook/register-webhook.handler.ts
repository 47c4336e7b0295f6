import { randomUUID } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { invalid } from '@crs/domain/errors';
import { WEBHOOK_EVENT_TYPES } from '@crs/domain/webhooks/webhook.events';
import { WEBHOOK_URL_GUARD } from '@crs/platform/tokens';
import { generateSigningSecret } from '@crs/webhooks/webhook-signing';
import type { WebhookUrlGuard } from '@crs/webhooks/webhook-url-guard';
import { requireOrganizationKey, type Caller } from '../../use-case/caller';
import { booleanField, refuseBothSecretOptions, secretField } from '../webhook-fields';
import { WebhookStream } from '../webhook-stream';

/** The fields of the request as sent: the handler checks each (see RegisterWebhookRequest). */
export interface RegisterWebhookInput {
  url?: unknown;
  event_types?: unknown;
  signing_secret?: unknown;
  generate_signing_secret?: unknown;
}

export interface RegisterWebhookResult {
  registered: true;
  url: string;
  event_types: string[];
  signing_secret_configured: boolean;
  message: string;
  /** Only when generated: shown in this answer and never again. */
  signing_secret?: string;
}

/** Register (or replace) the organization's indexing webhook, with a supplied, a generated or the existing signing secret. */
export class RegisterWebhook extends Command<RegisterWebhookResult> {
  constructor(readonly caller: Caller, readonly input: RegisterWebhookInput) {
    super();
  }
}

/**
 * Takes a key of the whole organization. The URL passes the guard (public HTTPS, no private or reserved address);
 * a new secret is sealed in the vault and becomes current with the Registered event. Without a secret option the
 * existing secret is kept.
 */
@CommandHandler(RegisterWebhook)
export class RegisterWebhookHandler implements ICommandHandler<RegisterWebhook> {
  constructor(private readonly stream: WebhookStream, @Inject(WEBHOOK_URL_GUARD) private readonly guard: WebhookUrlGuard) {}

  async execute({ caller, input }: RegisterWebhook): Promise<RegisterWebhookResult> {
    requireOrganizationKey(caller, 'register the webhook');
    const generate = booleanField(input.generate_signing_secret, 'generate_signing_secret');
    const supplied = input.signing_secret ?? undefined;
    refuseBothSecretOptions(generate, supplied);
    const secret = supplied !== undefined ? secretField(supplied) : generate ? generateSigningSecret() : null;
    const eventTypes = eventTypesField(input.event_types);
    const url = await this.guard.checkRegistration(input.url);
    const secretRef = secret ? { secretId: randomUUID(), generated: generate } : undefined;
    const state = await this.stream.decide(caller.ctx, { type: 'Register', url, eventTypes, secret: secretRef }, secretRef && secret ? { id: secretRef.secretId, value: secret } : undefined);
    const configured = state.secretId !== null;
    const result: RegisterWebhookResult = {
      registered: true,
      url,
      event_types: eventTypes,
      signing_secret_configured: configured,
      message: `Webhook registered${secretRef ? (generate ? ' with a generated signing secret (shown only in this response)' : ' with the supplied signing secret') : configured ? '; the existing signing secret is kept' : ' without signing'}`,
    };
    if (generate && secret) result.signing_secret = secret;
    return result;
  }
}

/** Omitted: every event type. Unknown types are 400; duplicates collapse; [] subscribes to nothing. */
function eventTypesField(v: unknown): string[] {
  if (v === undefined || v === null) return [...WEBHOOK_EVENT_TYPES];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw invalid('event_types must be an array of strings');
  for (const t of v) {
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t)) throw invalid(`event_types: unknown event type '${t}'; supported: ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  }
  return [...new Set(v as string[])];
}
