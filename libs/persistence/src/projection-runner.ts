import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { escapeIdentifier } from 'pg';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { DomainEventType } from '@crs/domain/domain-event';
import type { CheckpointMarker, EventStore, RecordedEvent, Subscription } from '@crs/eventstore/event-store.port';
import { applyEvents, handledBy, REPLAYING_SETTING, type Processor, type ReadModelProjection, type Subscriber } from './projection';

export interface RunnerLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const CHECKPOINT_DDL = `CREATE TABLE IF NOT EXISTS projection_checkpoints (
  name text PRIMARY KEY,
  position bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
)`;

/** Events applied per read-model transaction while catching up. */
const BATCH = 500;
/** Log positions read per page by rebuild and verify (the next page is read while one is applied). */
const REPLAY_PAGE = 5000;

/** 64-bit advisory lock key per projection, stable across processes. */
export function lockKey(name: string): string {
  let h = 0xcbf29ce484222325n;
  for (const ch of Buffer.from(`crs:projection:${name}`)) {
    h ^= BigInt(ch);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return BigInt.asIntN(64, h).toString();
}

export interface ProjectionStatus {
  name: string;
  kind: Subscriber['kind'];
  position: number;
  head: number;
  lag: number;
  error: string | null;
}

/**
 * Runs read-model projections and processors from catch-up subscriptions on the event log.
 *
 * Read models: each batch runs in one transaction that first takes `pg_advisory_xact_lock` for the
 * projection, re-reads the checkpoint inside the lock, skips events at or below it, applies the rest
 * and writes the checkpoint. So several instances may subscribe, but each event is applied exactly
 * once, and a rebuild (one transaction holding the same lock) can run while the service is live.
 *
 * Processors hold a session-level advisory lock for their whole run (one active instance each),
 * since their side effects must not run twice at once.
 *
 * A batch with none of a subscriber's event types (its subscription only says how far it skipped) opens no
 * transaction: the position moves in memory at once (what `waitFor` in this process reads) and is written within
 * CHECKPOINT_DEFER_MS, for every such subscriber in one statement. Checkpoints only ever grow (GREATEST), and a
 * lost deferred write only makes a restart skip the same irrelevant events again.
 */
export class ProjectionRunner {
  private readonly positions = new Map<string, number>();
  /** The last failure of each subscriber, and whether it was handling a batch (not reading or connecting). */
  private readonly errors = new Map<string, { message: string; handling: boolean }>();
  /** Subscribers handling a batch right now. */
  private readonly handling = new Set<string>();
  private readonly progress = new EventEmitter();
  private readonly subscriptions = new Set<Subscription>();
  private readonly loops: Promise<void>[] = [];
  private stopped = false;
  private readonly deferred = new Map<string, number>();
  private deferTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ds: DataSource,
    private readonly store: EventStore,
    readonly subscribers: Subscriber[],
    private readonly log: RunnerLogger,
  ) {
    this.progress.setMaxListeners(0);
  }

  get readModels(): ReadModelProjection[] {
    return this.subscribers.filter((s): s is ReadModelProjection => s.kind === 'read-model');
  }

  /**
   * Creates the checkpoint table and every read model. A read model whose DDL changed since its tables were built
   * (its schema hash differs) is rebuilt from the log before this returns (`rebuild`: new tables of the new shape
   * replace the old ones at commit), so a new version never runs on an old table shape, and never serves a read
   * model that is still catching up from an empty one.
   */
  async migrate(sql: { query(q: string, p?: unknown[]): Promise<any> } = this.ds): Promise<void> {
    await sql.query(CHECKPOINT_DDL);
    await sql.query('ALTER TABLE projection_checkpoints ADD COLUMN IF NOT EXISTS schema_hash text');
    for (const p of this.readModels) {
      const hash = schemaHash(p);
      const [row] = await sql.query('SELECT schema_hash FROM projection_checkpoints WHERE name = $1', [p.name]);
      if (row && row.schema_hash !== hash) {
        this.log.info({ projection: p.name }, 'read model schema changed: rebuilding it from the log');
        const rebuilt = await this.rebuild(p.name);
        this.log.info({ projection: p.name, events: rebuilt.events, ms: rebuilt.ms }, 'read model rebuilt in its new schema');
      }
      for (const ddl of p.ddl) await sql.query(ddl);
      await sql.query(
        `INSERT INTO projection_checkpoints (name, position, schema_hash) VALUES ($1, 0, $2) ON CONFLICT (name) DO UPDATE SET schema_hash = EXCLUDED.schema_hash`,
        [p.name, hash],
      );
    }
  }

  start(only?: (s: Subscriber) => boolean): void {
    for (const sub of this.subscribers) {
      if (only && !only(sub)) continue;
      this.loops.push(sub.kind === 'read-model' ? this.runReadModel(sub) : this.runProcessor(sub));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.subscriptions].map((s) => s.close().catch(() => undefined)));
    await Promise.allSettled(this.loops);
    clearTimeout(this.deferTimer);
    this.deferTimer = undefined;
    await this.flushCheckpoints();
  }

  /** Resolves when every named subscriber (default: all read models) has processed `position`, or after `timeoutMs` (returns false). */
  async waitFor(position: number, names?: string[], timeoutMs = 5000): Promise<boolean> {
    const targets = names ?? this.readModels.map((p) => p.name);
    const reached = () => targets.every((n) => (this.positions.get(n) ?? -1) >= position);
    if (reached()) return true;
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        clearInterval(poll);
        this.progress.off('advanced', onAdvance);
        resolve(ok);
      };
      const onAdvance = () => reached() && done(true);
      // Another process may be running the projections: read their checkpoints too.
      const poll = setInterval(async () => {
        try {
          const rows: { name: string; position: string }[] = await this.ds.query('SELECT name, position FROM projection_checkpoints WHERE name = ANY($1)', [targets]);
          for (const r of rows) this.advance(r.name, Number(r.position));
          if (reached()) done(true);
        } catch {
          /* transient; the timer bounds the wait */
        }
      }, 50);
      const timer = setTimeout(() => done(reached()), timeoutMs);
      this.progress.on('advanced', onAdvance);
    });
  }

  /** The last position this process knows a subscriber has processed (no I/O). */
  position(name: string): number {
    return this.positions.get(name) ?? 0;
  }

  async status(): Promise<ProjectionStatus[]> {
    const head = await this.store.headPosition();
    const rows: { name: string; position: string }[] = await this.ds.query('SELECT name, position FROM projection_checkpoints');
    const stored = new Map(rows.map((r) => [r.name, Number(r.position)]));
    return this.subscribers.map((s) => {
      const position = Math.max(stored.get(s.name) ?? 0, this.positions.get(s.name) ?? 0);
      return { name: s.name, kind: s.kind, position, head, lag: Math.max(0, head - position), error: this.errors.get(s.name)?.message ?? null };
    });
  }

  /**
   * Rebuilds a read model from the whole log in ONE transaction under the projection's lock: the log is replayed into
   * fresh tables in a schema of their own, which then replace the live ones (an atomic swap at commit). Readers keep
   * the old rows until then; they wait only for the swap itself (the old tables' drop takes their lock at the end).
   *
   * Replaying into new tables rather than over the emptied live ones is what makes a rebuild fast: the live tables'
   * old rows stay in their heap and indexes until commit (readers still see them), so every insert would check a
   * unique key against the dead copy of its own row and grow indexes twice the size.
   */
  async rebuild(name: string, onProgress?: (position: number, head: number) => void): Promise<{ events: number; position: number; ms: number }> {
    const projection = this.readModels.find((p) => p.name === name);
    if (!projection) throw new Error(`unknown read model ${name}`);
    const started = Date.now();
    const head = await this.store.headPosition();
    let applied = 0;
    let position = 0;
    await this.ds.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey(name)]);
      const [{ live, path }] = await tx.query(`SELECT current_schema() AS live, current_setting('search_path') AS path`);
      const shadow = escapeIdentifier(`crs_rebuild_${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`);
      // Rebuilds of one read model wait for each other (the lock above), and DDL is transactional: a rebuild killed
      // half way leaves no schema behind, so none is there to begin with.
      await tx.query(`CREATE SCHEMA ${shadow}`);
      // Unqualified names (the DDL, the projection's statements, its trigger functions) now resolve to the new tables;
      // any other table the projection reads is found in the live schema as before.
      await tx.query(`SELECT set_config('search_path', $1, true)`, [`${shadow}, ${escapeIdentifier(live)}`]);
      for (const ddl of projection.ddl) await tx.query(ddl);
      position = await this.replayInto(projection, tx, Infinity, (p, n) => {
        applied = n;
        onProgress?.(p, head);
      });
      await swapSchemaRetrying(tx, shadow, escapeIdentifier(live), projection.tables);
      await tx.query(`SELECT set_config('search_path', $1, true)`, [path]);
      await writeCheckpoint(tx, name, position);
    });
    this.advance(name, position);
    return { events: applied, position, ms: Date.now() - started };
  }

  /**
   * Applies every event (up to `until`) to the projection through `sql`; returns the position the log was read to.
   * Pages are large and the next one is read while the current one is applied; each page's handled events go to
   * the projection at once (`applyBatch` when it has one). A store that can filter by type (`readAllOfTypes`) sends
   * only the handled events: a projection of a few event types does not read the whole log.
   */
  async replayInto(projection: ReadModelProjection, sql: EntityManager, until: number, onProgress?: (position: number, applied: number) => void): Promise<number> {
    const store = this.store;
    const read = (from: number): Promise<{ events: RecordedEvent[]; scannedTo: number }> => {
      const p = store.readAllOfTypes
        ? store.readAllOfTypes(from, projection.handles, REPLAY_PAGE)
        : store.readAll({ after: from, maxCount: REPLAY_PAGE }).then((events) => ({ events, scannedTo: events.length ? events[events.length - 1].position : from }));
      p.catch(() => undefined); // awaited below; a failure while the previous page is applied must not go unhandled
      return p;
    };
    let after = 0;
    let applied = 0;
    let next = read(after);
    await sql.query(`SELECT set_config('${REPLAYING_SETTING}', 'on', true)`);
    while (true) {
      const { events: page, scannedTo } = await next;
      const reached = Math.min(scannedTo, until);
      const more = page.length === REPLAY_PAGE && scannedTo < until;
      if (more) next = read(scannedTo);
      const relevant = page.filter((ev) => ev.position <= until && handledBy(projection, ev));
      await applyEvents(projection, relevant, sql);
      applied += relevant.length;
      after = Math.max(after, reached);
      onProgress?.(after, applied);
      if (!more) break;
    }
    await sql.query(`SELECT set_config('${REPLAYING_SETTING}', 'off', true)`);
    await projection.afterReplay?.(sql);
    return after;
  }

  private advance(name: string, position: number): void {
    if ((this.positions.get(name) ?? -1) >= position) return;
    this.positions.set(name, position);
    this.progress.emit('advanced', name, position);
  }

  private async runReadModel(projection: ReadModelProjection): Promise<void> {
    while (!this.stopped) {
      try {
        const [row] = await this.ds.query('SELECT position FROM projection_checkpoints WHERE name = $1', [projection.name]);
        this.reconnected(projection.name);
        const start = row ? Number(row.position) : 0;
        this.advance(projection.name, start);
        await this.consume(projection.name, start, projection.handles, async (batch) => {
          const last = batch[batch.length - 1].position;
          const relevant = batch.filter((e) => handledBy(projection, e));
          if (!relevant.length) {
            this.deferCheckpoint(projection.name, last);
            this.advance(projection.name, last);
            return;
          }
          await this.ds.transaction(async (tx) => {
            await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey(projection.name)]);
            const [cp] = await tx.query('SELECT position FROM projection_checkpoints WHERE name = $1', [projection.name]);
            const checkpoint = cp ? Number(cp.position) : 0;
            await applyEvents(projection, relevant.filter((ev) => ev.position > checkpoint), tx);
            if (last > checkpoint) await writeCheckpoint(tx, projection.name, last);
          });
          this.advance(projection.name, last);
        });
      } catch (err) {
        if (this.stopped) break;
        this.fail(projection.name, err);
        await sleep(1000);
      }
    }
  }

  private async runProcessor(processor: Processor): Promise<void> {
    while (!this.stopped) {
      let lockRunner: QueryRunner | undefined;
      try {
        lockRunner = this.ds.createQueryRunner();
        await lockRunner.connect();
        const [got] = await lockRunner.query('SELECT pg_try_advisory_lock($1) AS ok', [lockKey(processor.name)]);
        if (!got.ok) {
          await sleep(2000); // another instance runs this processor
          continue;
        }
        const [row] = await this.ds.query('SELECT position FROM projection_checkpoints WHERE name = $1', [processor.name]);
        this.reconnected(processor.name);
        const start = row ? Number(row.position) : 0;
        this.advance(processor.name, start);
        await this.consume(processor.name, start, processor.handles, async (batch) => {
          const last = batch[batch.length - 1].position;
          const relevant = batch.filter((ev) => handledBy(processor, ev));
          if (!relevant.length) {
            this.deferCheckpoint(processor.name, last);
            this.advance(processor.name, last);
            return;
          }
          if (processor.handleBatch) {
            await processor.handleBatch(relevant);
            this.advance(processor.name, last);
          } else {
            for (const ev of batch) {
              if (handledBy(processor, ev)) await processor.handle(ev);
              this.advance(processor.name, ev.position);
            }
          }
          await writeCheckpoint(this.ds, processor.name, last);
        });
      } catch (err) {
        if (this.stopped) break;
        this.fail(processor.name, err);
        await sleep(1000);
      } finally {
        if (lockRunner && !lockRunner.isReleased) {
          await lockRunner.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
          await lockRunner.release().catch(() => undefined);
        }
      }
    }
  }

  /**
   * Pulls from a catch-up subscription and hands over batches: events already buffered by the
   * subscription are grouped (up to BATCH) so catching up costs one transaction per batch, while a
   * live event is handled as soon as it arrives.
   */
  private async consume(name: string, after: number, types: readonly DomainEventType[], onBatch: (batch: (RecordedEvent | CheckpointMarker)[]) => Promise<void>): Promise<void> {
    // Only the types the subscriber handles are read; checkpoint markers move its position past the others.
    const subscription = this.store.subscribeToAll({ after, types });
    this.subscriptions.add(subscription);
    const iterator = subscription[Symbol.asyncIterator]();
    try {
      let pending = iterator.next();
      while (!this.stopped) {
        const first = await pending;
        if (first.done) return;
        const batch: (RecordedEvent | CheckpointMarker)[] = [first.value];
        pending = iterator.next();
        while (batch.length < BATCH) {
          const next = await Promise.race([pending, nextTick()]);
          if (next === TICK) break;
          if (next.done) break;
          batch.push(next.value);
          pending = iterator.next();
        }
        this.handling.add(name);
        await onBatch(batch);
        this.handling.delete(name);
        this.errors.delete(name);
      }
    } finally {
      // (a failed batch leaves `handling` set for fail() to read)
      this.subscriptions.delete(subscription);
      await subscription.close().catch(() => undefined);
    }
  }

  private deferCheckpoint(name: string, position: number): void {
    if ((this.deferred.get(name) ?? -1) < position) this.deferred.set(name, position);
    if (this.deferTimer || this.stopped) return;
    this.deferTimer = setTimeout(() => {
      this.deferTimer = undefined;
      void this.flushCheckpoints();
    }, CHECKPOINT_DEFER_MS);
    this.deferTimer.unref();
  }

  /** Writes the deferred checkpoints in one statement (names in order, so two writers never deadlock). */
  private async flushCheckpoints(): Promise<void> {
    const entries = [...this.deferred].sort(([a], [b]) => (a < b ? -1 : 1));
    this.deferred.clear();
    if (!entries.length) return;
    try {
      await this.ds.query(
        `INSERT INTO projection_checkpoints (name, position, updated_at) SELECT n, p, now() FROM unnest($1::text[], $2::bigint[]) AS u(n, p)
         ON CONFLICT (name) DO UPDATE SET position = GREATEST(projection_checkpoints.position, EXCLUDED.position), updated_at = now()`,
        [entries.map(([n]) => n), entries.map(([, p]) => p)],
      );
    } catch (err) {
      if (this.stopped) return;
      this.log.error({ err: (err as Error).message }, 'deferred checkpoint write failed; retrying');
      for (const [n, p] of entries) this.deferCheckpoint(n, p);
    }
  }

  /**
   * The subscriber's loop reached Postgres again: a failure to read or connect (Postgres restarting) is over. One that
   * happened while handling a batch stays until a batch succeeds, so a poison event keeps its subscriber not ready.
   * Before, an error stayed until the subscriber next had an event of its own to handle: after a Postgres restart,
   * /ready said not_ready for as long as no such event came.
   */
  private reconnected(name: string): void {
    if (this.errors.get(name)?.handling === false) this.errors.delete(name);
  }

  private fail(name: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const handling = this.handling.delete(name) && !lostConnection(err);
    this.errors.set(name, { message, handling });
    this.log.error({ projection: name, err: message }, 'projection failed; retrying');
  }
}

/** Postgres went away or is restarting (not a fault of the events being handled). */
function lostConnection(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  const code = String(e?.code ?? '');
  return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code) || /^(08|57P)/.test(code) || /Connection terminated|connection (is )?closed/i.test(String(e?.message ?? ''));
}

export async function writeCheckpoint(sql: { query(q: string, p?: unknown[]): Promise<unknown> }, name: string, position: number): Promise<void> {
  await sql.query(
    `INSERT INTO projection_checkpoints (name, position, updated_at) VALUES ($1, $2, now())
     ON CONFLICT (name) DO UPDATE SET position = GREATEST(projection_checkpoints.position, EXCLUDED.position), updated_at = now()`,
    [name, position],
  );
}

/** How long a checkpoint that only skipped events may wait to be written. */
const CHECKPOINT_DEFER_MS = 100;

const TICK = Symbol('tick');
const nextTick = () => new Promise<typeof TICK>((r) => setImmediate(() => r(TICK)));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Moves a rebuilt read model into the live schema: its tables replace the live ones of the same names (their
 * indexes, constraints and triggers move with them), and the functions its DDL made (trigger functions) replace
 * theirs. The shadow schema must then be empty: anything else its DDL made fails the rebuild instead of being lost.
 */
async function swapSchema(tx: EntityManager, shadow: string, live: string, tables: string[]): Promise<void> {
  for (const table of tables) {
    await tx.query(`DROP TABLE IF EXISTS ${live}.${escapeIdentifier(table)}`);
    await tx.query(`ALTER TABLE ${shadow}.${escapeIdentifier(table)} SET SCHEMA ${live}`);
  }
  const functions: { name: string; args: string }[] = await tx.query(
    `SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args FROM pg_proc p WHERE p.pronamespace = $1::regnamespace`,
    [shadow],
  );
  for (const f of functions) {
    // The live tables that used the old function are dropped above, so nothing depends on it any more.
    await tx.query(`DROP FUNCTION IF EXISTS ${live}.${escapeIdentifier(f.name)}(${f.args})`);
    await tx.query(`ALTER FUNCTION ${shadow}.${escapeIdentifier(f.name)}(${f.args}) SET SCHEMA ${live}`);
  }
  await tx.query(`DROP SCHEMA ${shadow}`);
}

/** Swaps attempted before a rebuild gives up on deadlocks with readers. */
const SWAP_ATTEMPTS = 5;

/**
 * swapSchema from a savepoint, again when Postgres ends it as a deadlock. The swap locks the live tables one after the
 * other while a reader's statement may hold one of them and wait for another (a graph query reads relations, then
 * mentions); Postgres then aborts one side, and when that is the rebuild only the swap is tried again, not the replay.
 */
async function swapSchemaRetrying(tx: EntityManager, shadow: string, live: string, tables: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await tx.query('SAVEPOINT crs_swap');
    try {
      await swapSchema(tx, shadow, live, tables);
      await tx.query('RELEASE SAVEPOINT crs_swap');
      return;
    } catch (err) {
      const code = (err as { code?: string; driverError?: { code?: string } }).driverError?.code ?? (err as { code?: string }).code;
      if (code !== DEADLOCK_DETECTED || attempt >= SWAP_ATTEMPTS) throw err;
      await tx.query('ROLLBACK TO SAVEPOINT crs_swap');
    }
  }
}

const DEADLOCK_DETECTED = '40P01';

/** Identifies a read model's table shape: a change of DDL means a rebuild. */
export function schemaHash(p: ReadModelProjection): string {
  return createHash('sha256').update(p.ddl.join(';\n')).digest('hex').slice(0, 16);
}
