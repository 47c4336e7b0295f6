import type { EventStore } from '@crs/eventstore/event-store.port';
import type { BatchOutcome } from '@crs/eventstore/command-handling';
import { decideOnItems, type ItemDecision, type ItemStateCache } from '@crs/eventstore/item-stream';
import { decideItem } from '@crs/domain/items/item.decider';
import type { IndexingStatus } from '@crs/domain/items/item.events';
import type { RunnerLogger } from '@crs/persistence/projection-runner';
import type { ClaimQueue } from '../claim-queue';
import { PipelineFailure, type Work } from './work';

/**
 * Records a batch's decisions on its item streams: status moves (processing for a batch still at work after a second,
 * completed), failures (errored with a code, and the lease released) and unexpected errors (the lease kept, so the
 * item is redone).
 */
export class StatusRecorder {
  constructor(
    private readonly store: EventStore,
    private readonly streamStates: ItemStateCache,
    private readonly queue: ClaimQueue,
    private readonly log: RunnerLogger,
  ) {}

  on(w: Work): Omit<ItemDecision, 'decide'> {
    return { ctx: w.ctx, databaseId: w.item.database_id, itemKey: w.item.item_key };
  }

  advance(w: Work, status: IndexingStatus, errorCode?: string, message?: string): ItemDecision {
    const { item } = w;
    return {
      ...this.on(w),
      decide: (state) =>
        decideItem(
          { type: 'Advance', contentVersion: item.content_version, status, errorCode, message, ids: { databaseId: item.database_id, itemKey: item.item_key, itemId: item.item_id, collection: item.collection, store: item.store } },
          state,
        ),
    };
  }

  /** Appends the decisions in one go; a decision that throws is a bug, so it fails the batch (which is retried). */
  async record(decisions: ItemDecision[]): Promise<BatchOutcome<unknown>[]> {
    const outcomes = await decideOnItems(this.store, decisions, this.streamStates);
    for (const o of outcomes) if (o.error !== undefined) throw o.error;
    return outcomes;
  }

  /** Marks the items that have used up their attempts as failed. */
  giveUpAfter(maxAttempts: number, work: Work[]): void {
    for (const w of work) {
      if (w.job.attempts > maxAttempts) w.failure = new PipelineFailure('PROCESSING_FAILED', `gave up after ${maxAttempts} attempts`);
    }
  }

  /** Records `errored` for the items that failed and releases them. */
  async finishFailed(work: Work[]): Promise<void> {
    const failed = work.filter((w) => w.failure && !w.done);
    if (!failed.length) return;
    await this.record(failed.map((w) => this.advance(w, 'errored', w.failure!.code, w.failure!.message)));
    for (const w of failed) w.done = true;
    await this.queue.release(failed.map((w) => w.job));
  }

  unexpected(w: Work, err: unknown): void {
    w.retry = true;
    this.log.error({ item: w.item.item_id, err: (err as Error).message, attempt: w.job.attempts }, 'pipeline step failed; will retry');
  }
}
