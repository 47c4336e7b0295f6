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
  private readonly hub: NotificationHub;

  constructor(
    private readonly pool: Pool,
    private readonly options: PostgresEventStoreOptions = {},
  ) {
    this.table = qualifiedTable(options);
    this.hub = new NotificationHub(pool);
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
    const subscription = new PostgresSubscription(this, this.hub, options.after ?? 0, {
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
    await this.hub.release();
  }

  private async currentRevision(stream: string): Promise<number | 'no_stream'> {
    const { rows } = await this.pool.query<{ revision: string | null }>(
      `SELECT max(revision) AS revision FROM ${this.table} WHERE stream = $1`,
      [stream],
    );
    return rows[0].revision === null ? 'no_stream' : Number(rows[0].revision);
  }
}

/** How long notifications are gathered before subscriptions are woken. */
const NOTIFY_COALESCE_MS = 3;

/**
 * One LISTEN connection per store, shared by every subscription: a process runs a dozen subscriptions and must
 * not tie up a pool connection for each. A broken connection wakes everyone (they re-read, so nothing is missed)
 * and is re-established on the next wait.
 */
class NotificationHub {
  private client: PoolClient | undefined;
  private connecting: Promise<boolean> | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly pool: Pool) {}

  get listening(): boolean {
    return this.client !== undefined;
  }

  add(listener: () => void): () => Promise<void> {
    this.listeners.add(listener);
    return async () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) await this.release();
    };
  }

  /** Best effort: returns true when a new LISTEN was established (callers re-read at once). */
  ensure(): Promise<boolean> {
    if (this.client) return Promise.resolve(false);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<boolean> {
    let client: PoolClient | undefined;
    try {
      client = await this.pool.connect();
      client.on('notification', this.onNotification);
      client.on('error', this.onError);
      await client.query(`LISTEN ${EVENTS_NOTIFY_CHANNEL}`);
      if (this.listeners.size === 0) {
        this.detach(client, false);
        return false;
      }
      this.client = client;
      return true;
    } catch {
      if (client) this.detach(client, true);
      return false;
    }
  }

  private pending: NodeJS.Timeout | undefined;

  /**
   * Notifications are coalesced for a few milliseconds: a burst of appends (an ingest of hundreds of items) wakes
   * each subscription once, for one page read, instead of once per event.
   */
  private readonly onNotification = (msg: Notification): void => {
    if (msg.channel !== EVENTS_NOTIFY_CHANNEL || this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      for (const l of this.listeners) l();
    }, NOTIFY_COALESCE_MS);
  };

  private readonly onError = (): void => {
    const broken = this.client;
    this.client = undefined;
    if (broken) this.detach(broken, true);
    for (const l of this.listeners) l();
  };

  async release(): Promise<void> {
    if (this.pending) clearTimeout(this.pending);
    this.pending = undefined;
    const client = this.client;
    this.client = undefined;
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
    client.removeListener('error', this.onError);
    try {
      client.release(destroy);
    } catch {
      // already released
    }
  }
}

/**
 * Catch-up subscription: pages through readAll, then sleeps until a NOTIFY (through the store's shared
 * LISTEN connection) or the fallback poll says there may be more. The consumer pulls (`for await`), so
 * nothing is read ahead beyond one page.
 */
class PostgresSubscription implements Subscription {
  private closed = false;
  private unsubscribe: (() => Promise<void>) | undefined;
  /** Set by a notification; cleared before each read, so one arriving during a read is not lost. */
  private notified = false;
  private wake: (() => void) | undefined;
  private iterator: AsyncGenerator<RecordedEvent> | undefined;

  constructor(
    private readonly store: PostgresEventStore,
    private readonly hub: NotificationHub,
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
    await this.stopListening();
  }

  private async *run(): AsyncGenerator<RecordedEvent> {
    let checkpoint = this.after;
    try {
      // LISTEN before the first read, so nothing committed after that read can go unnoticed.
      this.unsubscribe = this.hub.add(this.onNotification);
      await this.hub.ensure();
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
      await this.stopListening();
    }
  }

  private readonly onNotification = (): void => {
    this.notified = true;
    this.wake?.();
  };

  private async waitForWake(): Promise<void> {
    // Re-listened after a lost connection: re-read at once, something may have been missed meanwhile.
    if (!this.hub.listening && (await this.hub.ensure())) return;
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

  private async stopListening(): Promise<void> {
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    await unsubscribe?.();
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
