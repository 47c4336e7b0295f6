import { randomUUID } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '@crs/config';
import { DomainError } from '@crs/domain/errors';
import { testPayload } from '@crs/domain/webhooks/webhook-payload';
import type { RateLimiter } from '@crs/persistence/rate-limiter';
import { APP_CONFIG, DATA_SOURCE, RATE_LIMITER, SIGNING_SECRET_VAULT, WEBHOOK_SENDER } from '@crs/platform/tokens';
import { findRegistration } from '@crs/projections/webhook-outbox/webhook-outbox.queries';
import type { SigningSecretVault } from '@crs/webhooks/signing-secret-vault';
import type { WebhookSender } from '@crs/webhooks/webhook-sender';
import { deliveryHeaders } from '@crs/webhooks/webhook-signing';
import { RateLimitedError } from '../../http/errors';
import { requireOrganizationKey, type Caller } from '../../use-case/caller';

/** The test endpoint makes this service send a request: bounded per organization. */
export const TEST_DELIVERY_LIMIT = { perMinute: 10 };

export interface TestWebhookResult {
  delivered: boolean;
  status_code: number | null;
  message: string;
  delivery_id: string;
}

/** Send the synthetic test event to the organization's webhook now. */
export class TestWebhook extends Command<TestWebhookResult> {
  constructor(readonly caller: Caller) {
    super();
  }
}

/**
 * Takes a key of the whole organization; rate limited per organization. Signs with the current secret and sends
 * once, with the configured timeout; records nothing (no event, no delivery record).
 */
@CommandHandler(TestWebhook)
export class TestWebhookHandler implements ICommandHandler<TestWebhook> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(RATE_LIMITER) private readonly rateLimiter: RateLimiter,
    @Inject(SIGNING_SECRET_VAULT) private readonly vault: SigningSecretVault,
    @Inject(WEBHOOK_SENDER) private readonly sender: WebhookSender,
  ) {}

  async execute({ caller }: TestWebhook): Promise<TestWebhookResult> {
    requireOrganizationKey(caller, 'send a test event');
    const { orgId } = caller.ctx;
    const limit = await this.rateLimiter.consume(orgId, 'webhook-test', TEST_DELIVERY_LIMIT.perMinute, 60);
    if (!limit.allowed) throw new RateLimitedError(limit.retryAfterSeconds, `test deliveries (${TEST_DELIVERY_LIMIT.perMinute} per minute per organization)`);
    const hook = await findRegistration(this.ds, orgId);
    if (!hook) throw new DomainError('not_found', 'WEBHOOK_NOT_REGISTERED', 'no indexing webhook is registered for this organization; POST /webhooks/indexing first');
    const secret = hook.secret_id ? await this.vault.get(orgId, hook.secret_id) : null;
    if (hook.secret_id && secret === null) throw new Error('signing secret row missing');
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
}
