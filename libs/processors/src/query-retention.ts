import type { DataSource } from 'typeorm';
import { streams } from '@crs/domain/streams';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { lockKey, type RunnerLogger } from '@crs/persistence/projection-runner';
import { queriesPastRetention, removeQueryRecords } from '@crs/projections/queries/queries.queries';

export interface QueryRetentionOptions {
  /** Recorded queries older than this are removed; 0 keeps them for ever. */
  retentionMs: number;
  /** Time between passes (the first one runs a minute after start). */
  everyMs: number;
  /** Queries removed per statement. */
  batch?: number;
}

/**
 * Every query is recorded (a `QueryRecorded` stream and its row in the queries read model), which makes the log grow
 * with the traffic, not with the content: a busy read-only service would grow without bound. Records older than the
 * retention are removed, log and read model alike, except those feedback links to (its export and report read the
 * query's recorded results). Removing the stream first and the row second keeps a rebuild from the log equal to the live read
 * model: a rebuild no longer sees the stream either. One process runs a pass at a time (an advisory lock).
 */
export class QueryRetention {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  private stopped = true;
  private stopRequested = false;

  constructor(
    private readonly ds: DataSource,
    private readonly store: EventStore,
    private readonly log: RunnerLogger,
    private readonly options: QueryRetentionOptions,
  ) {}

  start(): void {
    if (this.options.retentionMs <= 0 || !this.stopped) return;
    this.stopped = false;
    this.stopRequested = false;
    this.schedule(Math.min(60_000, this.options.everyMs));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopRequested = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One pass: removes every expired record not linked to feedback; returns how many. */
  async runOnce(now = Date.now()): Promise<number> {
    if (this.options.retentionMs <= 0) return 0;
    const cutoff = new Date(now - this.options.retentionMs);
    const batch = this.options.batch ?? 500;
    const session = this.ds.createQueryRunner();
    await session.connect();
    try {
      const [got] = await session.query('SELECT pg_try_advisory_lock($1) AS ok', [lockKey('query-retention')]);
      if (!got.ok) return 0; // another process is on it
      try {
        let removed = 0;
        for (;;) {
          const rows = await queriesPastRetention(session, cutoff, batch);
          if (!rows.length) return removed;
          for (const r of rows) await this.store.deleteStream(streams.query(r.database_id, r.request_id));
          await removeQueryRecords(session, rows.map((r) => r.request_id));
          removed += rows.length;
          if (this.stopRequested) return removed;
        }
      } finally {
        await session.query('SELECT pg_advisory_unlock($1)', [lockKey('query-retention')]);
      }
    } finally {
      await session.release();
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.runOnce()
        .then((removed) => {
          if (removed) this.log.info({ removed }, 'query records past their retention removed');
          return removed;
        })
        .catch((err) => {
          this.log.error({ err: (err as Error).message }, 'query retention pass failed; tried again at the next pass');
          return 0;
        })
        .finally(() => this.schedule(this.options.everyMs));
    }, delayMs);
    this.timer.unref();
  }
}
