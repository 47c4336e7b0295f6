import type { DataSource } from 'typeorm';
import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Processor } from '@crs/persistence/projection';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { decideOnItem } from '@crs/eventstore/item-stream';
import { memoriesDerivedFrom } from '@crs/projections/items/items.queries';

/** Deleting a memory deletes the memories inferred from it (each an ItemDeleted of its own). */
export class DerivedMemoryCleaner implements Processor {
  readonly kind = 'processor' as const;
  readonly name = 'derived-memory-cleaner';
  readonly handles = ['ItemDeleted'] as const;

  constructor(private readonly ds: DataSource, private readonly store: EventStore, private readonly runner: ProjectionRunner) {}

  async handle(event: RecordedEvent): Promise<void> {
    if (event.type !== 'ItemDeleted') return;
    const d = event.data;
    if (d.store !== 'memory') return;
    await this.runner.waitFor(event.position, ['items'], 30_000);
    const derived = await memoriesDerivedFrom(this.ds, d.databaseId, d.collection, d.itemId);
    const ctx = { orgId: event.metadata.orgId, actor: `system:${this.name}`, requestId: event.metadata.requestId as string | undefined };
    for (const x of derived) {
      const ids = { databaseId: d.databaseId, itemKey: x.item_key, itemId: x.item_id, collection: d.collection, store: 'memory' as const };
      await decideOnItem(this.store, ctx, d.databaseId, x.item_key, (state) => (state.live ? [{ type: 'ItemDeleted', data: ids }] : []));
    }
  }
}
