/** The Postgres event log's catch-up subscription: pages of the log, then live events as the notification hub wakes it. */
import { CHECKPOINT_EVENT, type CheckpointMarker, type EventShape, type EventStore, type RecordedEvent, type Subscription } from '../event-store.port';
import type { AppendNotice, NotificationHub } from './notification-hub';

/** The reads a subscription pages through: its store's. */
export interface SubscriptionSource<E extends EventShape> {
  readAll: EventStore<E>['readAll'];
  readAllOfTypes: NonNullable<EventStore<E>['readAllOfTypes']>;
}

export interface PostgresSubscriptionOptions<E extends EventShape> {
  /** Only events of these types are read; checkpoint markers stand for the rest. Undefined: every event. */
  types?: E['type'][];
  /** Events per page while catching up. */
  batchSize: number;
  /** Fallback poll while caught up, in case a notification is missed. */
  pollIntervalMs: number;
  /** Called once, on close. */
  onClose: (s: PostgresSubscription<E>) => void;
}

/**
 * Catch-up subscription: pages through readAll, then sleeps until a NOTIFY (through the store's shared
 * LISTEN connection) or the fallback poll says there may be more. The consumer pulls (`for await`), so
 * nothing is read ahead beyond one page.
 */
export class PostgresSubscription<E extends EventShape> implements Subscription<E> {
  private closed = false;
  private unsubscribe: (() => Promise<void>) | undefined;
  /** Set by a notification; cleared before each read, so one arriving during a read is not lost. */
  private notified = false;
  /** What the notifications since the last read said was appended; undefined = unknown (read to find out). */
  private notices: AppendNotice[] | undefined = [];
  private wake: (() => void) | undefined;
  private iterator: AsyncGenerator<RecordedEvent<E> | CheckpointMarker> | undefined;

  constructor(
    private readonly store: SubscriptionSource<E>,
    private readonly hub: NotificationHub,
    private readonly after: number,
    private readonly options: PostgresSubscriptionOptions<E>,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent<E> | CheckpointMarker> {
    this.iterator ??= this.run();
    return this.iterator;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.options.onClose(this);
    await this.stopListening();
  }

  private async *run(): AsyncGenerator<RecordedEvent<E> | CheckpointMarker> {
    let checkpoint = this.after;
    try {
      // LISTEN before the first read, so nothing committed after that read can go unnoticed.
      this.unsubscribe = this.hub.add(this.onNotification);
      await this.hub.ensure();
      let mustRead = true;
      while (!this.closed) {
        const { types, batchSize } = this.options;
        const skipTo = !mustRead && types ? this.skippable(checkpoint, types) : null;
        if (skipTo !== null) {
          // Only events of other types were appended right after the checkpoint: move past them without a read.
          if (skipTo > checkpoint) {
            yield checkpointMarker(skipTo);
            checkpoint = skipTo;
          }
          if (this.closed) return;
          mustRead = this.notified ? false : await this.waitForWake();
          continue;
        }
        this.notified = false;
        this.notices = [];
        const { events: page, scannedTo } = types
          ? await this.store.readAllOfTypes(checkpoint, types, batchSize)
          : await this.store.readAll({ after: checkpoint, maxCount: batchSize }).then((events) => ({ events, scannedTo: events.length ? events[events.length - 1].position : checkpoint }));
        for (const event of page) {
          if (this.closed) return;
          yield event;
          checkpoint = event.position;
        }
        if (this.closed) return;
        if (scannedTo > checkpoint) {
          // Events of other types were left out up to here: say so, so the consumer's checkpoint moves past them.
          yield checkpointMarker(scannedTo);
          checkpoint = scannedTo;
        }
        if (page.length === batchSize) continue;
        mustRead = this.notified ? false : await this.waitForWake();
      }
    } finally {
      await this.stopListening();
    }
  }

  private readonly onNotification = (notices: AppendNotice[] | undefined): void => {
    this.notified = true;
    if (notices && this.notices) this.notices.push(...notices);
    else this.notices = undefined;
    this.wake?.();
  };

  /**
   * How far the checkpoint may move without a read: when the notifications since the last read cover every position
   * from the checkpoint on (no gap) and name none of `types`, to the last of them; otherwise null (read). Positions
   * are taken and committed in order under the append lock, so a notice's range holds exactly its append's events.
   */
  private skippable(checkpoint: number, wanted: readonly E['type'][]): number | null {
    if (!this.notices) return null;
    const types: readonly string[] = wanted;
    let to = checkpoint;
    for (const n of [...this.notices].sort((a, b) => a.first - b.first)) {
      if (n.last <= to) continue;
      if (n.first > to + 1 || n.types.some((t) => types.includes(t))) return null;
      to = n.last;
    }
    this.notices = [];
    this.notified = false;
    return to;
  }

  /** Sleeps until a notification (false) or the fallback poll or a re-established LISTEN (true: read). */
  private async waitForWake(): Promise<boolean> {
    // Re-listened after a lost connection: re-read at once, something may have been missed meanwhile.
    if (!this.hub.listening && (await this.hub.ensure())) return true;
    if (this.closed) return true;
    if (this.notified) return false;
    return new Promise<boolean>((resolve) => {
      const done = (byNotification: boolean): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve(!byNotification);
      };
      const timer = setTimeout(() => done(false), this.options.pollIntervalMs);
      this.wake = () => done(true);
    });
  }

  private async stopListening(): Promise<void> {
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    await unsubscribe?.();
  }
}

function checkpointMarker(position: number): CheckpointMarker {
  return { stream: '', revision: -1, position, type: CHECKPOINT_EVENT, data: null, metadata: { eventId: '', occurredAt: '', orgId: '', actor: '' } };
}
