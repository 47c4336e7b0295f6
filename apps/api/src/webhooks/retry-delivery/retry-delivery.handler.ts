import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '@crs/config';
import { DomainError, notFound } from '@crs/domain/errors';
import { streams } from '@crs/domain/streams';
import { decideDelivery, evolveDelivery, initialDelivery, type DeliveryCommand, type DeliveryState } from '@crs/domain/webhooks/delivery.decider';
import type { DeliveryEvent } from '@crs/domain/webhooks/webhook.events';
import { handleCommand } from '@crs/eventstore/command-handling';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { APP_CONFIG, DATA_SOURCE, EVENT_STORE, PROJECTION_RUNNER, WEBHOOK_DISPATCHER } from '@crs/platform/tokens';
import { findDelivery } from '@crs/projections/webhook-outbox/webhook-outbox.queries';
import type { WebhookDispatcher } from '@crs/webhooks/webhook-dispatcher';
import type { Caller } from '../../use-case/caller';

export interface RetryDeliveryResult {
  delivery_id: string;
  queued: true;
  message: string;
}

/** Queue one delivery again, with a fresh retry schedule. */
export class RetryDelivery extends Command<RetryDeliveryResult> {
  constructor(readonly caller: Caller, readonly deliveryId: string) {
    super();
  }
}

/**
 * Only a record the key can see (its organization, a database it reaches: 404 otherwise) and only from failed or
 * permanently_failed (409 otherwise, also while it is being sent). Decides on the delivery's stream, waits for the
 * outbox read model and wakes the dispatcher.
 */
@CommandHandler(RetryDelivery)
export class RetryDeliveryHandler implements ICommandHandler<RetryDelivery> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(WEBHOOK_DISPATCHER) private readonly dispatcher: WebhookDispatcher,
  ) {}

  async execute({ caller, deliveryId }: RetryDelivery): Promise<RetryDeliveryResult> {
    const record = await findDelivery(this.ds, caller.ctx.orgId, deliveryId, caller.key.databases);
    if (!record) throw notFound('DELIVERY_NOT_FOUND', `no delivery '${deliveryId}'`);
    if (record.visible_status === 'sweeping') {
      throw new DomainError('conflict', 'DELIVERY_NOT_RETRYABLE', `delivery ${deliveryId} is being sent right now; only failed or permanently_failed deliveries can be retried`);
    }
    const out = await handleCommand<DeliveryState, DeliveryEvent, DeliveryCommand>(
      this.store,
      streams.webhookDelivery(deliveryId),
      { initial: initialDelivery, evolve: evolveDelivery },
      decideDelivery,
      { type: 'RequestRetry', deliveryId },
      { ...caller.ctx, databaseId: record.database_id },
    );
    if (out.position !== null) await this.runner.waitFor(out.position, ['webhook-outbox'], this.config.projectionWaitMs);
    this.dispatcher.wake();
    return { delivery_id: deliveryId, queued: true, message: 'Delivery queued for retry with a fresh retry schedule' };
  }
}
