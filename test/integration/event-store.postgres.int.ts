import { Pool } from 'pg';
import { createEventStore, EventStoreDbEventStore } from '@crs/eventstore';
import type { EventShape, EventStore } from '@crs/eventstore/event-store.port';
import { APPEND_LOCK_KEY, PostgresEventStore } from '@crs/eventstore/postgres/postgres-event-store';
import { CHECKPOINT_EVENT } from '@crs/eventstore/event-store.port';
import { createTestDatabase } from '../support/test-database';
import { describeEventStoreContract, event, uniqueStream } from './event-store.contract';

async function freshStore(label: string, options: ConstructorParameters<typeof PostgresEventStore>[1] = {}) {
  const pool = new Pool({ connectionString: await createTestDatabase(label), max: 12 });
  await PostgresEventStore.migrate(pool, options);
  const store = new PostgresEventStore<EventShape>(pool, options);
  return {
    pool,
    store,
    cleanup: async () => {
      await store.close();
      await pool.end();
    },
  };
}

describeEventStoreContract('postgres', () => freshStore('eventstore'));

describe('PostgresEventStore specifics', () => {
  let ctx: Awaited<ReturnType<typeof freshStore>>;

  beforeAll(async () => {
    ctx = await freshStore('eventstore_pg', { schema: 'log', table: 'entries', pollIntervalMs: 200 });
  });
  afterAll(async () => {
    await ctx?.cleanup();
  });

  it('starts empty: head 0, readAll []', async () => {
    expect(await ctx.store.headPosition()).toBe(0);
    expect(await ctx.store.readAll()).toEqual([]);
  });

  it('appendMany is all or nothing: a conflict in the last request writes none of the others', async () => {
    const a = uniqueStream('atomic-a');
    const b = uniqueStream('atomic-b');
    await ctx.store.append(b, [event('Exists')]);
    const head = await ctx.store.headPosition();
    await expect(
      ctx.store.appendMany([
        { stream: a, events: [event('A')], expectedRevision: 'no_stream' },
        { stream: b, events: [event('B')], expectedRevision: 5 },
      ]),
    ).rejects.toMatchObject({ code: 'WRONG_EXPECTED_REVISION', stream: b, expected: 5, actual: 0 });
    expect(await ctx.store.readStream(a)).toEqual([]);
    expect(await ctx.store.headPosition()).toBe(head);
  });

  it('a typed subscription reads only those types, with a marker at the head for what it left out', async () => {
    const start = await ctx.store.headPosition();
    const s = uniqueStream('typed-pg');
    await ctx.store.append(s, [event('Keep'), event('Skip'), event('Skip')]);
    const head = await ctx.store.headPosition();
    const subscription = ctx.store.subscribeToAll({ after: start, types: ['Keep'] });
    const seen: { type: string; position: number }[] = [];
    for await (const e of subscription) {
      seen.push({ type: e.type, position: e.position });
      if (e.position >= head) break;
    }
    await subscription.close();
    expect(seen).toEqual([
      { type: 'Keep', position: head - 2 },
      { type: CHECKPOINT_EVENT, position: head },
    ]);
  });

  it('a typed subscription moves past appends of other types without reading the log, and reads for its own', async () => {
    const own = await freshStore('eventstore_skip', { pollIntervalMs: 60_000 }); // no fallback poll during the test
    try {
      const s = uniqueStream('skip');
      await own.store.append(s, [event('Wanted')]);
      const subscription = own.store.subscribeToAll({ types: ['Wanted'] });
      const it = subscription[Symbol.asyncIterator]();
      expect((await it.next()).value).toMatchObject({ type: 'Wanted', position: 1 });
      const reads = jest.spyOn(own.store, 'readAllOfTypes');
      try {
        await own.store.append(s, [event('Other'), event('Other')]);
        await own.store.append(uniqueStream('skip-b'), [event('Third')]);
        const seen: { type: string; position: number }[] = [];
        while (seen.at(-1)?.position !== 4) {
          const { value } = await it.next();
          seen.push({ type: value.type, position: value.position });
        }
        expect(seen.every((e) => e.type === CHECKPOINT_EVENT)).toBe(true);
        expect(reads).not.toHaveBeenCalled();
        await own.store.append(s, [event('Other'), event('Wanted')]);
        expect((await it.next()).value).toMatchObject({ type: 'Wanted', position: 6 });
        expect(reads).toHaveBeenCalledTimes(1);
      } finally {
        reads.mockRestore();
        await subscription.close();
      }
    } finally {
      await own.cleanup();
    }
  });

  it('migrates idempotently, also concurrently', async () => {
    const options = { schema: 'log', table: 'entries' };
    await Promise.all([PostgresEventStore.migrate(ctx.pool, options), PostgresEventStore.migrate(ctx.pool, options), ctx.store.init()]);
    const { rows } = await ctx.pool.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'log' AND tablename = 'entries' ORDER BY 1`);
    expect(rows.map((r) => r.indexname)).toEqual(['entries_event_id_idx', 'entries_pkey', 'entries_stream_revision_key']);
  });

  it('replaces a (stream, event_id) index of an older log by the event id alone, and retries stay idempotent', async () => {
    const options = { schema: 'older', table: 'entries' };
    await PostgresEventStore.migrate(ctx.pool, options);
    await ctx.pool.query('DROP INDEX older.entries_event_id_idx');
    await ctx.pool.query('CREATE INDEX entries_stream_event_id_idx ON older.entries (stream, event_id)');
    await PostgresEventStore.migrate(ctx.pool, options);
    const { rows } = await ctx.pool.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'older' AND tablename = 'entries' ORDER BY 1`);
    expect(rows.map((r) => r.indexname)).toEqual(['entries_event_id_idx', 'entries_pkey', 'entries_stream_revision_key']);
    const store = new PostgresEventStore<EventShape>(ctx.pool, options);
    const s = uniqueStream('retry');
    const first = [event('A'), event('B')];
    const appended = await store.append(s, first, { expectedRevision: 'no_stream' });
    expect(await store.append(s, first, { expectedRevision: 'no_stream' })).toEqual(appended); // a retry: answered from what is there
    // The same event id in another stream is not a retry there.
    const other = uniqueStream('retry-other');
    expect((await store.append(other, [first[0]])).nextRevision).toBe(0);
    expect((await store.readStream(s)).map((e) => e.type)).toEqual(['A', 'B']);
  });

  it('stores the event id once, in its column, and reads it back in the metadata (also from rows that still hold it there)', async () => {
    const s = uniqueStream('event-id');
    const e = event('Stored', { x: 1 });
    await ctx.store.append(s, [e]);
    const { rows } = await ctx.pool.query(`SELECT event_id, metadata FROM log.entries WHERE stream = $1`, [s]);
    expect(rows[0].event_id).toBe(e.metadata.eventId);
    expect(rows[0].metadata).not.toHaveProperty('eventId');
    const [read] = await ctx.store.readStream(s);
    expect(read.metadata).toEqual(e.metadata);
    await ctx.pool.query(`UPDATE log.entries SET metadata = metadata || jsonb_build_object('eventId', event_id) WHERE stream = $1`, [s]);
    expect((await ctx.store.readStream(s))[0].metadata).toEqual(e.metadata);
  });

  it('physically removes a deleted stream’s rows', async () => {
    const stream = uniqueStream('hard');
    await ctx.store.append(stream, [event('Secret', { text: 'gone' })]);
    await ctx.store.deleteStream(stream);
    const { rows } = await ctx.pool.query(`SELECT count(*)::int AS n FROM log.entries WHERE stream = $1 OR data::text LIKE '%gone%'`, [stream]);
    expect(rows[0].n).toBe(0);
  });

  it('a caught-up subscription sleeps (no busy loop) and returns its LISTEN connection on close', async () => {
    const readAll = jest.spyOn(ctx.store, 'readAll');
    try {
      const subscription = ctx.store.subscribeToAll({ after: await ctx.store.headPosition() });
      const iterator = subscription[Symbol.asyncIterator]();
      const pending = iterator.next();
      await new Promise((r) => setTimeout(r, 1_000));
      // Fallback poll every 200 ms: about 5 reads in a second, not thousands.
      expect(readAll.mock.calls.length).toBeLessThanOrEqual(8);
      expect(ctx.pool.totalCount - ctx.pool.idleCount).toBe(1); // the LISTEN connection

      const appended = await ctx.store.append(uniqueStream('wake'), [event('Wake')]);
      expect((await pending).value).toMatchObject({ type: 'Wake', position: appended.position });

      await subscription.close();
      expect(await iterator.next()).toEqual({ done: true, value: undefined });
      expect(ctx.pool.totalCount - ctx.pool.idleCount).toBe(0);
    } finally {
      readAll.mockRestore();
    }
  });

  it('many subscriptions share one LISTEN connection', async () => {
    const head = await ctx.store.headPosition();
    const subs = Array.from({ length: 10 }, () => ctx.store.subscribeToAll({ after: head }));
    const pendings = subs.map((s) => s[Symbol.asyncIterator]().next());
    // Once every subscription has read its first page and gone to sleep, only the shared LISTEN connection is busy.
    const busy = () => ctx.pool.totalCount - ctx.pool.idleCount;
    for (let i = 0; i < 100 && busy() !== 1; i++) await new Promise((r) => setTimeout(r, 50));
    expect(busy()).toBe(1);
    const appended = await ctx.store.append(uniqueStream('fanout'), [event('Fan')]);
    for (const p of pendings) expect((await p).value).toMatchObject({ type: 'Fan', position: appended.position });
    await Promise.all(subs.map((s) => s.close()));
    expect(ctx.pool.totalCount - ctx.pool.idleCount).toBe(0);
  });

  it('wakes on NOTIFY well before the fallback poll', async () => {
    const slow = new PostgresEventStore<EventShape>(ctx.pool, { schema: 'log', table: 'entries', pollIntervalMs: 60_000 });
    const subscription = slow.subscribeToAll({ after: await slow.headPosition() });
    try {
      const iterator = subscription[Symbol.asyncIterator]();
      const pending = iterator.next();
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      await slow.append(uniqueStream('notify'), [event('Ping')]);
      expect((await pending).value).toMatchObject({ type: 'Ping' });
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await slow.close();
    }
  });

  it('keeps positions in commit order under many concurrent single-event appends', async () => {
    const before = await ctx.store.headPosition();
    const streams = Array.from({ length: 10 }, () => uniqueStream('order'));
    await Promise.all(streams.flatMap((s) => Array.from({ length: 5 }, () => ctx.store.append(s, [event('E')]))));
    const all = await ctx.store.readAll({ after: before });
    expect(all).toHaveLength(50);
    for (const s of streams) expect(all.filter((e) => e.stream === s).map((e) => e.revision)).toEqual([0, 1, 2, 3, 4]);
  });

  it('serialises appends on the append lock, so positions commit in order', async () => {
    // A writer holding the lock (as an append in flight would) blocks the next append until it commits.
    const holder = await ctx.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK_KEY]);
      let done = false;
      const append = ctx.store.append(uniqueStream('locked'), [event('Waited')]).then((r) => ((done = true), r));
      await new Promise((r) => setTimeout(r, 150));
      expect(done).toBe(false);
      await holder.query('COMMIT');
      await expect(append).resolves.toMatchObject({ nextRevision: 0 });
    } finally {
      holder.release();
    }
  });
});

describe('createEventStore', () => {
  it('uses the Postgres events table when no EventStoreDB URL is given, creating it', async () => {
    const pool = new Pool({ connectionString: await createTestDatabase('eventstore_factory'), max: 4 });
    try {
      const store: EventStore<EventShape> = await createEventStore({ pool });
      expect(store).toBeInstanceOf(PostgresEventStore);
      const result = await store.append(uniqueStream('factory'), [event('Made')], { expectedRevision: 'no_stream' });
      expect(await store.headPosition()).toBe(result.position);
      await store.close();
    } finally {
      await pool.end();
    }
  });

  it('uses EventStoreDB when a URL is given (no connection until first use)', async () => {
    const pool = new Pool({ connectionString: 'postgres://unused@127.0.0.1:1/unused' });
    const store = await createEventStore({ pool, eventstoreUrl: 'kurrentdb://127.0.0.1:1?tls=false' });
    expect(store).toBeInstanceOf(EventStoreDbEventStore);
    await store.close();
    await pool.end();
  });
});
