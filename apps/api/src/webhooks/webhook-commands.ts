import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DomainError, invalid, notFound } from '@crs/domain/errors';
import { streams } from '@crs/domain/streams';
import { decideDelivery, evolveDelivery, initialDelivery, type DeliveryCommand, type DeliveryState } from '@crs/domain/webhooks/delivery.decider';
import { decideWebhook, evolveWebhook, initialWebhook, type WebhookCommand, type WebhookState } from '@crs/domain/webhooks/webhook.decider';
import { WEBHOOK_EVENT_TYPES, type DeliveryEvent, type WebhookEvent } from '@crs/domain/webhooks/webhook.events';
import { testPayload } from '@crs/domain/webhooks/webhook-payload';
import { handleCommand, type CommandContext } from '@crs/eventstore/command-handling';
import type { AppConfig } from '@crs/config';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import type { RateLimiter } from '@crs/persistence/rate-limiter';
import {
  APP_CONFIG,
  EVENT_STORE,
  PROJECTION_RUNNER,
  RATE_LIMITER,
  SIGNING_SECRET_VAULT,
  WEBHOOK_DISPATCHER,
  WEBHOOK_SENDER,
  WEBHOOK_URL_GUARD,
} from '@crs/platform/tokens';
import type { SigningSecretVault } from '@crs/webhooks/signing-secret-vault';
import type { WebhookDispatcher } from '@crs/webhooks/webhook-dispatcher';
import type { WebhookSender } from '@crs/webhooks/webhook-sender';
import { deliveryHeaders, generateSigningSecret } from '@crs/webhooks/webhook-signing';
import type { WebhookUrlGuard } from '@crs/webhooks/webhook-url-guard';
import { RateLimitedError } from '../http/errors';
import { WebhookReads } from './webhook-reads';

/** Spec: a supplied signing secret has at least 16 characters. */
export const MIN_SECRET_CHARS = 16;
export const MAX_SECRET_CHARS = 512;
/** The test endpoint makes this service send a request: bounded per organization. */
export const TEST_DELIVERY_LIMIT = { perMinute: 10 };

export interface RegisterInput {
  url?: unknown;
  event_types?: unknown;
  signing_secret?: unknown;
  generate_signing_secret?: unknown;
}

/**
 * Webhook commands: registration and signing secrets on the organization's webhook stream, manual retries
 * on a delivery's stream. Secrets go to the encrypted vault (never to the log) before the event that makes
 * them current; the previous ones are deleted once the read model shows the new state.
 */
@Injectable()
export class WebhookCommands {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(RATE_LIMITER) private readonly rateLimiter: RateLimiter,
    @Inject(WEBHOOK_URL_GUARD) private readonly guard: WebhookUrlGuard,
    @Inject(SIGNING_SECRET_VAULT) private readonly vault: SigningSecretVault,
    @Inject(WEBHOOK_SENDER) private readonly sender: WebhookSender,
    @Inject(WEBHOOK_DISPATCHER) private readonly dispatcher: WebhookDispatcher,
    private readonly reads: WebhookReads,
  ) {}

  async register(ctx: CommandContext, input: RegisterInput) {
    const generate = booleanField(input.generate_signing_secret, 'generate_signing_secret');
    const supplied = input.signing_secret ?? undefined;
    if (generate && supplied !== undefined) {
      throw new DomainError('unprocessable', 'SIGNING_SECRET_CONFLICT', 'send either generate_signing_secret or signing_secret, not both');
    }
    const secret = supplied !== undefined ? secretField(supplied) : generate ? generateSigningSecret() : null;
    const eventTypes = eventTypesField(input.event_types);
    const url = await this.guard.checkRegistration(input.url);
    const secretRef = secret ? { secretId: randomUUID(), generated: generate } : undefined;
    const state = await this.onWebhook(ctx, { type: 'Register', url, eventTypes, secret: secretRef }, secretRef && secret ? { id: secretRef.secretId, value: secret } : undefined);
    const configured = state.secretId !== null;
    const response: Record<string, unknown> = {
      registered: true,
      url,
      event_types: eventTypes,
      signing_secret_configured: configured,
      message: `Webhook registered${secretRef ? (generate ? ' with a generated signing secret (shown only in this response)' : ' with the supplied signing secret') : configured ? '; the existing signing secret is kept' : ' without signing'}`,
    };
    if (generate && secret) response.signing_secret = secret;
    return response;
  }

  async remove(ctx: CommandContext) {
    const before = await this.reads.registration(ctx.orgId, { databases: null }); // (an organization key: changes need one)
    await this.onWebhook(ctx, { type: 'Delete' });
    await this.vault.deleteExcept(ctx.orgId, null);
    return before.registered
      ? { deleted: true, message: 'Webhook registration and its signing secret deleted; no further deliveries will be sent' }
      : { deleted: false, message: 'No webhook was registered' };
  }

  async setSecret(ctx: CommandContext, input: { signing_secret?: unknown; generate_signing_secret?: unknown }) {
    const generateFlag = booleanField(input.generate_signing_secret, 'generate_signing_secret');
    const supplied = input.signing_secret ?? undefined;
    if (generateFlag && supplied !== undefined) {
      throw new DomainError('unprocessable', 'SIGNING_SECRET_CONFLICT', 'send either generate_signing_secret or signing_secret, not both');
    }
    if (input.generate_signing_secret === false && supplied === undefined) {
      throw invalid('generate_signing_secret is false and no signing_secret was sent: nothing to set (send signing_secret, or no body to generate one; DELETE removes the secret)');
    }
    const generated = supplied === undefined;
    const secret = generated ? generateSigningSecret() : secretField(supplied);
    const secretId = randomUUID();
    await this.onWebhook(ctx, { type: 'SetSecret', secretId, generated }, { id: secretId, value: secret });
    return generated
      ? { signing_secret: secret, generated: true, signing_secret_configured: true, message: 'Signing secret generated; it is shown only in this response and signs every delivery from now on' }
      : { generated: false, signing_secret_configured: true, message: 'Signing secret set; it signs every delivery from now on' };
  }

  async removeSecret(ctx: CommandContext) {
    const before = await this.reads.registration(ctx.orgId, { databases: null }); // (an organization key: changes need one)
    await this.onWebhook(ctx, { type: 'RemoveSecret' });
    await this.vault.deleteExcept(ctx.orgId, null);
    return {
      deleted: before.signing_secret_configured,
      signing_secret_configured: false,
      message: before.signing_secret_configured ? 'Signing secret removed; deliveries no longer carry signature headers' : 'No signing secret was configured',
    };
  }

  /** Sends the synthetic test event to the current registration (no delivery record). */
  async test(orgId: string) {
    const limit = await this.rateLimiter.consume(orgId, 'webhook-test', TEST_DELIVERY_LIMIT.perMinute, 60);
    if (!limit.allowed) throw new RateLimitedError(limit.retryAfterSeconds, `test deliveries (${TEST_DELIVERY_LIMIT.perMinute} per minute per organization)`);
    const hook = await this.reads.current(orgId);
    if (!hook) throw new DomainError('not_found', 'WEBHOOK_NOT_REGISTERED', 'no indexing webhook is registered for this organization; POST /webhooks/indexing first');
    const secret = hook.secretId ? await this.vault.get(orgId, hook.secretId) : null;
    if (hook.secretId && secret === null) throw new Error('signing secret row missing');
    const now = new Date();
    const payload = testPayload(orgId, `test_${randomUUID()}`, now.toISOString());
    const body = Buffer.from(JSON.stringify(payload), 'utf8');
    const headers = deliveryHeaders({ deliveryId: payload.delivery_id, eventType: payload.event, body, secret, now });
    const result = await this.sender.send({ url: hook.url, body, headers, timeoutMs: this.config.webhooks.timeoutMs });
    return {
      delivered: result.ok,
      status_code: result.statusCode,
      message: result.ok ? `Test event delivered: the receiver answered ${result.statusCode}` : `Test event not delivered (${result.errorCode}): ${result.errorMessage}`,
      delivery_id: payload.delivery_id,
    };
  }

  /** Manual retry: only from failed or permanently_failed (409 otherwise, also while it is being sent). */
  async retry(ctx: CommandContext, auth: { databases: string[] | null }, deliveryId: string) {
    const record = await this.reads.delivery(ctx.orgId, auth, deliveryId);
    if (!record) throw notFound('DELIVERY_NOT_FOUND', `no delivery '${deliveryId}'`);
    if (record.status === 'sweeping') {
      throw new DomainError('conflict', 'DELIVERY_NOT_RETRYABLE', `delivery ${deliveryId} is being sent right now; only failed or permanently_failed deliveries can be retried`);
    }
    const out = await handleCommand<DeliveryState, DeliveryEvent, DeliveryCommand>(
      this.store,
      streams.webhookDelivery(deliveryId),
      { initial: initialDelivery, evolve: evolveDelivery },
      decideDelivery,
      { type: 'RequestRetry', deliveryId },
      { ...ctx, databaseId: record.databaseId },
    );
    if (out.position !== null) await this.runner.waitFor(out.position, ['webhook-outbox'], this.config.projectionWaitMs);
    this.dispatcher.wake();
    return { delivery_id: deliveryId, queued: true, message: 'Delivery queued for retry with a fresh retry schedule' };
  }

  /**
   * Decides on the organization's webhook stream and waits for the outbox read model; a new secret is
   * sealed in the vault first and becomes current with the event (then older ones are deleted).
   */
  private async onWebhook(ctx: CommandContext, command: WebhookCommand, newSecret?: { id: string; value: string }): Promise<WebhookState> {
    const vault = this.vault;
    if (newSecret) await vault.put(ctx.orgId, newSecret.id, newSecret.value);
    let before = initialWebhook();
    let out;
    try {
      out = await handleCommand<WebhookState, WebhookEvent, WebhookCommand>(
        this.store,
        streams.webhook(ctx.orgId),
        { initial: initialWebhook, evolve: evolveWebhook },
        (c, state) => {
          before = state;
          return decideWebhook(c, state);
        },
        command,
        ctx,
      );
    } catch (err) {
      if (newSecret) await vault.delete(ctx.orgId, newSecret.id).catch(() => undefined);
      throw err;
    }
    if (out.position !== null) await this.runner.waitFor(out.position, ['webhook-outbox'], this.config.projectionWaitMs);
    if (newSecret) await vault.deleteExcept(ctx.orgId, newSecret.id);
    return out.events.reduce(evolveWebhook, before);
  }
}

function booleanField(v: unknown, field: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalid(`${field} must be a boolean`);
  return v;
}

function secretField(v: unknown): string {
  if (typeof v !== 'string') throw invalid('signing_secret must be a string');
  const n = [...v].length;
  if (n < MIN_SECRET_CHARS) throw invalid(`signing_secret must be at least ${MIN_SECRET_CHARS} characters`);
  if (n > MAX_SECRET_CHARS) throw invalid(`signing_secret must be at most ${MAX_SECRET_CHARS} characters`);
  return v;
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
