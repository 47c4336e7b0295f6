import type { EventStore } from '@crs/eventstore/event-store.port';
import type { BatchOutcome } from '@crs/eventstore/command-handling';
import { lastPosition } from '@crs/eventstore/item-stream';
import type { StepClock } from '@crs/domain/step-clock';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';

/** Waits until the search index (and the item rows) have applied a batch's ItemChunked events. */
export class IndexWait {
  constructor(
    private readonly store: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly steps: StepClock,
  ) {}

  /**
   * Searchable only once the chunks are in the index (and the item rows say so). An item chunked by an earlier
   * attempt decides nothing now: then wait for the head.
   */
  async untilIndexed(chunked: BatchOutcome<unknown>[], items: number): Promise<void> {
    const chunkedAt = lastPosition(chunked);
    const indexedAt = chunkedAt !== null && chunked.every((o) => o.events?.length) ? chunkedAt : await this.store.headPosition();
    const indexed = await this.steps.timed('index.wait_index', items, () => this.runner.waitFor(indexedAt, ['search-index', 'items'], 60_000));
    if (!indexed) throw new Error('the search index did not catch up in time');
  }
}
