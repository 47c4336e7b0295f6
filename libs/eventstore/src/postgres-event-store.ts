import type { Pool, PoolClient, Notification } from 'pg';
import {
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type Subscription,
} from './event-store.port';

export interface PostgresEventStoreOptions {
  /** Schema holding the table; default: the connection's search_path. Created by `migrate` when given. */
  schema?: string;
  /** Table name; default `events`. */
  table?: string;
  /** Events per page while a subscription catches up. Default 500. */
  subscriptionBatchSize?: number;
  /** Fallback poll while a caught-up subscription waits, in case a notification is missed. Default 1000 ms. */
  pollIntervalMs?: number;
}

/** Channel woken on every append; the payload is the last appended position (a hint only). */
export const EVENTS_NOTIFY_CHANNEL = 'crs_events';

/**
 * One advisory lock serialises all appends (and deletes), so global positions are taken and
 * committed in increasing order: a reader that saw position N can never later see a new event
 * below N. Without it, a transaction that took position 5 could commit after one that took 6, and a
 * subscriber reading `position > 6` would skip 5 forever. Key: FNV-1a of a fixed name, in the same
 * style as the projection locks (libs/persistence), so the two families cannot collide by accident.
 */
export const APPEND_LOCK_KEY = fnv1a64('crs:eventstore:append');
const MIGRATE_LOCK_KEY = fnv1a64('crs:eventstore:migrate');

/** Postgres event log: the embedded default. The pool belongs to the caller (close() does not end it). */
export class PostgresEventStore implements EventStore {
  private readonly table: string;
  private readonly subscriptions = new Set<PostgresSubscription>();

  constructor(
    private readonly pool: Pool,
    private readonly options: PostgresEventStoreOptions = {},
  ) {
    this.table = qualifiedTable(options);
  }

  /** Creates the schema (if named), table and indexes; idempotent and safe to run from several processes at once. */
  static async migrate(pool: Pool, options: Pick<PostgresEventStoreOptions, 'schema' | 'table'> = {}): Promise<void> {
    const table = qualifiedTable(options);
    const indexName = quoteIdent(`${options.table ?? 'events'}_stream_event_id_idx`);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // Concurrent CREATE ... IF NOT EXISTS can still collide on the catalog; the lock makes it one at a time.
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATE_LOCK_KEY]);
      if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(options.schema)}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${table} (
        position bigserial PRIMARY KEY,
        stream text NOT NULL,
        revision bigint NOT NULL,
        event_id uuid NOT NULL,
        type text NOT NULL,
        data jsonb NOT NULL,
        metadata jsonb NOT NULL,
        created_at timestamptz DEFAULT now(),
        UNIQUE (stream, revision)
      )`);
      await client.query(`CREATE INDEX IF NOT EXISTS ${indexName} ON ${table} (stream, event_id)`);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /** Same as `PostgresEventStore.migrate(pool, options)` with this store's table. */
  async init(): Promise<void> {
    await PostgresEventStore.migrate(this.pool, this.options);
  }

  async append(stream: string, events: NewEvent[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    const expected = options.expectedRevision ?? 'any';
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK_KEY]);

      // Idempotent retry (EventStoreDB semantics): checked before the expected revision, since a
      // retried append would otherwise fail its own expected-revision check.
      if (events.length > 0) {
        const ids = events.map((e) => e.metadata.eventId);
        const { rows } = await client.query<{ hit: boolean | null; revision: string | null; position: string | null }>(
          `SELECT bool_or(event_id = $2::uuid) AS hit, max(revision) AS revision, max(position) AS position
             FROM ${this.table} WHERE stream = $1 AND event_id = ANY($3::uuid[])`,
          [stream, ids[0], ids],
        );
        if (rows[0].hit) {
          await client.query('COMMIT');
          return { nextRevision: Number(rows[0].revision), position: Number(rows[0].position) };
        }
      }

      const head = await client.query<{ revision: string; position: string }>(
        `SELECT revision, position FROM ${this.table} WHERE stream = $1 ORDER BY revision DESC LIMIT 1`,
        [stream],
      );
      const current = head.rows.length ? Number(head.rows[0].revision) : null;
      checkExpectedRevision(stream, expected, current);

      if (events.length === 0) {
        await client.query('COMMIT');
        return { nextRevision: current ?? -1, position: head.rows.length ? Number(head.rows[0].position) : 0 };
      }

      const params: unknown[] = [stream];
      const tuples = events.map((event, i) => {
        const revision = (current ?? -1) + 1 + i;
        params.push(revision, event.metadata.eventId, event.type, JSON.stringify(event.data ?? null), JSON.stringify(event.metadata));
        const p = params.length;
        return `($1, $${p - 4}::bigint, $${p - 3}::uuid, $${p - 2}, $${p - 1}::jsonb, $${p}::jsonb)`;
      });
      // VALUES rows are evaluated in order, so positions increase with revision inside the batch.
      const inserted = await client.query<{ position: string; revision: string }>(
        `INSERT INTO ${this.table} (stream, revision, event_id, type, data, metadata)
         VALUES ${tuples.join(', ')} RETURNING position, revision`,
        params,
      );
      const last = inserted.rows.reduce((a, b) => (Number(b.position) > Number(a.position) ? b : a));
      // NOTIFY inside the transaction is delivered only when it commits: subscribers wake after
      // the rows are visible, never before, and a rolled-back append wakes nobody.
      await client.query('SELECT pg_notify($1, $2)', [EVENTS_NOTIFY_CHANNEL, last.position]);
      await client.query('COMMIT');
      return { nextRevision: Number(last.revision), position: Number(last.position) };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      // Only reachable if a writer bypasses the append lock (e.g. an older build): same meaning.
      if (isUniqueViolation(err)) throw new WrongExpectedRevisionError(stream, expected, await this.currentRevision(stream));
      throw err;
    } finally {
      client.release();
    }
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    const backwards = options.direction === 'backwards';
    const { rows } = await this.pool.query<EventRow>(
      backwards
        ? `SELECT ${COLUMNS} FROM ${this.table}
            WHERE stream = $1 AND ($2::bigint IS NULL OR revision <= $2::bigint)
            ORDER BY revision DESC LIMIT $3`
        : `SELECT ${COLUMNS} FROM ${this.table}
            WHERE stream = $1 AND revision >= $2::bigint
            ORDER BY revision ASC LIMIT $3`,
      [stream, options.fromRevision ?? (backwards ? null : 0), options.maxCount ?? null],
    );
    return rows.map(toRecordedEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${COLUMNS} FROM ${this.table} WHERE position > $1 ORDER BY position ASC LIMIT $2`,
      [options.after ?? 0, options.maxCount ?? null],
    );
    return rows.map(toRecordedEvent);
  }

  subscribeToAll(options: { after?: number } = {}): Subscription {
    const subscription = new PostgresSubscription(this, this.pool, options.after ?? 0, {
      batchSize: this.options.subscriptionBatchSize ?? 500,
      pollIntervalMs: this.options.pollIntervalMs ?? 1000,
      onClose: (s) => this.subscriptions.delete(s),
    });
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Hard delete: the stream's rows are gone from the log; its positions become gaps. */
  async deleteStream(stream: string): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // Under the append lock, so a concurrent append cannot land half before and half after the delete.
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK_KEY]);
      await client.query(`DELETE FROM ${this.table} WHERE stream = $1`, [stream]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async headPosition(): Promise<number> {
    const { rows } = await this.pool.query<{ position: string | null }>(`SELECT max(position) AS position FROM ${this.table}`);
    return rows[0].position === null ? 0 : Number(rows[0].position);
  }

  /** Ends open subscriptions. The pool is the caller's and stays open. */
  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
  }

  private async currentRevision(stream: string): Promise<number | 'no_stream'> {
    const { rows } = await this.pool.query<{ revision: string | null }>(
      `SELECT max(revision) AS revision FROM ${this.table} WHERE stream = $1`,
      [stream],
    );
    return rows[0].revision === null ? 'no_stream' : Number(rows[0].revision);
  }
}

/**
 * Catch-up subscription: pages through readAll, then sleeps until a NOTIFY on a dedicated
 * connection (or the fallback poll) says there may be more. The consumer pulls (`for await`), so
 * nothing is read ahead beyond one page.
 */
class PostgresSubscription implements Subscription {
  private closed = false;
  private listener: PoolClient | undefined;
  /** Set by a notification; cleared before each read, so one arriving during a read is not lost. */
  private notified = false;
  private wake: (() => void) | undefined;
  private iterator: AsyncGenerator<RecordedEvent> | undefined;

  constructor(
    private readonly store: PostgresEventStore,
    private readonly pool: Pool,
    private readonly after: number,
    private readonly options: { batchSize: number; pollIntervalMs: number; onClose: (s: PostgresSubscription) => void },
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    this.iterator ??= this.run();
    return this.iterator;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wake?.();
    this.options.onClose(this);
    await this.releaseListener();
  }

  private async *run(): AsyncGenerator<RecordedEvent> {
    let checkpoint = this.after;
    try {
      // LISTEN before the first read, so nothing committed after that read can go unnoticed.
      await this.listen();
      while (!this.closed) {
        this.notified = false;
        const page = await this.store.readAll({ after: checkpoint, maxCount: this.options.batchSize });
        for (const event of page) {
          if (this.closed) return;
          yield event;
          checkpoint = event.position;
        }
        if (this.closed) return;
        if (page.length === this.options.batchSize || this.notified) continue;
        await this.waitForWake();
      }
    } finally {
      await this.releaseListener();
    }
  }

  private readonly onNotification = (msg: Notification): void => {
    if (msg.channel !== EVENTS_NOTIFY_CHANNEL) return;
    this.notified = true;
    this.wake?.();
  };

  private readonly onListenerError = (): void => {
    // The LISTEN connection broke: drop it, poll, and listen again on the next wait.
    const broken = this.listener;
    this.listener = undefined;
    if (broken) this.detach(broken, true);
    this.wake?.();
  };

  /** Best effort: without a LISTEN connection the subscription still progresses by polling. */
  private async listen(): Promise<boolean> {
    if (this.listener || this.closed) return false;
    let client: PoolClient | undefined;
    try {
      client = await this.pool.connect();
      if (this.closed) {
        client.release();
        return false;
      }
      client.on('notification', this.onNotification);
      client.on('error', this.onListenerError);
      this.listener = client;
      await client.query(`LISTEN ${EVENTS_NOTIFY_CHANNEL}`);
      return true;
    } catch {
      if (client && this.listener === client) {
        this.listener = undefined;
        this.detach(client, true);
      }
      return false;
    }
  }

  private async waitForWake(): Promise<void> {
    // Re-listened after a lost connection: re-read at once, something may have been missed meanwhile.
    if (!this.listener && (await this.listen())) return;
    if (this.closed || this.notified) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.options.pollIntervalMs);
      this.wake = done;
    });
  }

  private async releaseListener(): Promise<void> {
    const client = this.listener;
    this.listener = undefined;
    if (!client) return;
    try {
      await client.query('UNLISTEN *');
      this.detach(client, false);
    } catch {
      this.detach(client, true);
    }
  }

  private detach(client: PoolClient, destroy: boolean): void {
    client.removeListener('notification', this.onNotification);
    client.removeListener('error', this.onListenerError);
    try {
      client.release(destroy);
    } catch {
      // already released
    }
  }
}

interface EventRow {
  position: string;
  stream: string;
  revision: string;
  type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
}

const COLUMNS = 'position, stream, revision, type, data, metadata';

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    stream: row.stream,
    revision: Number(row.revision),
    position: Number(row.position),
    type: row.type,
    data: row.data,
    metadata: row.metadata,
  };
}

function checkExpectedRevision(stream: string, expected: ExpectedRevision, current: number | null): void {
  const ok =
    expected === 'any' ||
    (expected === 'no_stream' && current === null) ||
    (expected === 'stream_exists' && current !== null) ||
    (typeof expected === 'number' && current === expected);
  if (!ok) throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === '23505';
}

function qualifiedTable(options: Pick<PostgresEventStoreOptions, 'schema' | 'table'>): string {
  const table = quoteIdent(options.table ?? 'events');
  return options.schema ? `${quoteIdent(options.schema)}.${table}` : table;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return BigInt.asIntN(64, h).toString();
}
