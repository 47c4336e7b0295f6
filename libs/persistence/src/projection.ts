import { isEventOf, type DomainEventType } from '@crs/domain/domain-event';
import type { CheckpointMarker, RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from './data-source';

/**
 * A read-model projection: pure SQL writes derived from events, applied in one transaction with its
 * checkpoint. `apply` must be idempotent (every projection spec delivers each event twice) and must
 * take time only from event metadata, so a rebuild reproduces the read model byte for byte.
 */
export interface ReadModelProjection {
  kind: 'read-model';
  name: string;
  /** Idempotent DDL with unqualified table names (resolved through search_path). */
  ddl: string[];
  /** Tables this projection owns: truncated on rebuild, compared on verify. */
  tables: string[];
  /** Event types this projection reacts to; others only advance its checkpoint. */
  handles: readonly DomainEventType[];
  /** An event of one of `handles` (narrowed by `switch (event.type)`; any other type is left alone). */
  apply(event: RecordedEvent, sql: Sql): Promise<void>;
  /**
   * Optional: the handled events of a page at once, in log order, with the same outcome as `apply` on each of them
   * in turn (a property test per projection proves it over random event sequences). Lets a projection turn a page
   * into a few set-based statements instead of one or more round trips per event. The runner uses it when present,
   * both live and in rebuild/verify.
   */
  applyBatch?(events: RecordedEvent[], sql: Sql): Promise<void>;
  /**
   * Optional: runs once at the end of a replay (rebuild, verify), in the replay's transaction. While a replay runs,
   * the transaction-local setting `crs.replaying` is 'on' (REPLAYING_SETTING), so a projection can defer work that
   * is cheap per live batch but quadratic over a whole log in one transaction (derived tables kept by triggers) and
   * do it here once, set-based.
   */
  afterReplay?(sql: Sql): Promise<void>;
}

/** Transaction-local setting that is 'on' while a replay (rebuild, verify) applies the log to a projection. */
export const REPLAYING_SETTING = 'crs.replaying';

/** Whether a subscriber handles an item of the log: an event of one of its types (never a checkpoint marker). */
export function handledBy(subscriber: { handles: readonly DomainEventType[] }, item: RecordedEvent | CheckpointMarker): item is RecordedEvent {
  return isEventOf(item, subscriber.handles);
}

/** Applies handled events in log order: `applyBatch` when the projection has it, else `apply` one by one. */
export async function applyEvents(projection: ReadModelProjection, events: RecordedEvent[], sql: Sql): Promise<void> {
  if (!events.length) return;
  if (projection.applyBatch) return projection.applyBatch(events, sql);
  for (const e of events) await projection.apply(e, sql);
}

/**
 * Splits a batch into runs a projection can fold in memory and the events that must run on their own (set-wide
 * deletions such as DatabaseDeleted), keeping log order: `fold` gets each run, `single` each barrier event.
 */
export async function inSegments(
  events: RecordedEvent[],
  isBarrier: (e: RecordedEvent) => boolean,
  fold: (run: RecordedEvent[]) => Promise<void>,
  single: (e: RecordedEvent) => Promise<void>,
): Promise<void> {
  let run: RecordedEvent[] = [];
  for (const e of events) {
    if (!isBarrier(e)) {
      run.push(e);
      continue;
    }
    if (run.length) await fold(run);
    run = [];
    await single(e);
  }
  if (run.length) await fold(run);
}

/**
 * A processor does work outside the database (index, provision, deliver) and appends what happened
 * as events. It is never rebuilt; its checkpoint only says where to resume after a restart, so
 * `handle` must tolerate seeing an event again.
 */
export interface Processor {
  kind: 'processor';
  name: string;
  handles: readonly DomainEventType[];
  handle(event: RecordedEvent): Promise<void>;
  /** Optional: the handled events of a batch at once, in log order (for engines where one write beats many). */
  handleBatch?(events: RecordedEvent[]): Promise<void>;
}

export type Subscriber = ReadModelProjection | Processor;
