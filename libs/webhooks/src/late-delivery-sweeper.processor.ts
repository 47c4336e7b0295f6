import type { DataSource } from 'typeorm';
import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Processor } from '@crs/persistence/projection';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { deliveryIsLive } from '@crs/projections/webhook-outbox/webhook-outbox.queries';

/**
 * A delivery attempt recorded for a database or collection that is being deleted (or is gone) is deleted from the log
 * again. The dispatcher may be sending while the deletion lists and deletes the delivery streams; its attempt, recorded
 * after a slow receiver answered, would start the deleted stream anew, and a `delivery-*` stream would outlive its
 * database. The delivery is live only while its record exists and its collection is active.
 */
export class LateDeliverySweeper implements Processor {
  readonly kind = 'processor' as const;
  readonly name = 'late-delivery-sweeper';
  readonly handles = ['DeliveryAttempted', 'DeliveryRetryRequested'] as const;

  constructor(
    private readonly ds: DataSource,
    private readonly store: EventStore,
    private readonly runner: ProjectionRunner,
  ) {}

  async handle(event: RecordedEvent): Promise<void> {
    if (event.type !== 'DeliveryAttempted' && event.type !== 'DeliveryRetryRequested') return;
    await this.runner.waitFor(event.position, ['webhook-outbox', 'databases'], 30_000);
    if (!(await deliveryIsLive(this.ds, event.data.deliveryId))) await this.store.deleteStream(event.stream);
  }
}
