import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import type { EventShape, EventStore } from '@crs/eventstore/event-store.port';
import { PostgresEventStore } from '@crs/eventstore/postgres/postgres-event-store';
import { openDataSource } from './data-source';
import { ProjectionRunner } from './projection-runner';
import { databasesProjection } from '@crs/projections/databases/databases.projection';
import { createTestDatabase } from '@crs/test/support/test-database';
import type { DataSource } from 'typeorm';

const quiet = { info: () => undefined, error: () => undefined };

/** A fresh test database whose log holds one database's creation (named `name`), for the runner and its read models. */
async function withOneDatabase(label: string, name: string, body: (t: { ds: DataSource; pool: Pool; store: PostgresEventStore; databaseId: string; log: typeof quiet }) => Promise<void>) {
  const url = await createTestDatabase(label);
  const ds = await openDataSource(url, { poolSize: 3 });
  const pool = new Pool({ connectionString: url, max: 3 });
  try {
    const store = new PostgresEventStore(pool);
    await store.init();
    const databaseId = randomUUID();
    const meta = { eventId: randomUUID(), occurredAt: '2026-01-01T00:00:00.000Z', orgId: 'org1', actor: 'test' };
    await store.append(`database-${databaseId}`, [{ type: 'DatabaseCreated', data: { databaseId, name, metadataSchema: [], embedder: { modelId: 'm', dimensions: 3 } }, metadata: meta }]);
    await body({ ds, pool, store, databaseId, log: quiet });
  } finally {
    await pool.end();
    await ds.destroy();
  }
}

describe('read model schema changes', () => {
  it('a changed DDL rebuilds the read model from the log before migrate returns: the new shape, every row, the checkpoint at the head', () =>
    withOneDatabase('schemahash', 'db1', async ({ ds, store, databaseId, log }) => {
      const head = await store.headPosition();
      const checkpoint = async () => (await ds.query(`SELECT position FROM projection_checkpoints WHERE name = 'databases'`))[0].position;
      const v1 = { ...databasesProjection, ddl: [`CREATE TABLE IF NOT EXISTS rm_databases (id uuid PRIMARY KEY)`, `CREATE TABLE IF NOT EXISTS rm_collections (x int)`] };
      await new ProjectionRunner(ds, store, [v1], log).migrate();
      await ds.query(`UPDATE projection_checkpoints SET position = 42 WHERE name = 'databases'`);
      // Same DDL: nothing happens.
      await new ProjectionRunner(ds, store, [v1], log).migrate();
      expect(await checkpoint()).toBe('42');
      // New DDL: the tables have the new shape and hold what the log says as soon as migrate returns.
      await new ProjectionRunner(ds, store, [databasesProjection], log).migrate();
      expect(await checkpoint()).toBe(String(Math.max(42, head)));
      const cols = await ds.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'rm_databases'`);
      expect(cols.map((c: any) => c.column_name)).toContain('scheduler_ready');
      expect(await ds.query(`SELECT id, name FROM rm_databases`)).toEqual([{ id: databaseId, name: 'db1' }]);
    }));
});

describe('replay', () => {
  it('reads only the handled event types when the store can filter, checkpoints at the head, and equals an unfiltered replay', async () => {
    const url = await createTestDatabase('replayfilter');
    const ds = await openDataSource(url, { poolSize: 2 });
    const pool = new Pool({ connectionString: url, max: 2 });
    const log = { info: () => undefined, error: () => undefined };
    try {
      const store = new PostgresEventStore(pool);
      await store.init();
      // Noise: events of a handled-elsewhere type whose data no projection here reads (the same log, untyped).
      const noise: EventStore<EventShape> = store;
      const meta = (i: number) => ({ eventId: randomUUID(), occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), orgId: 'org1', actor: 'test' });
      // 3 databases among 12,000 events of other types: more than two replay pages of the whole log.
      for (let i = 0; i < 12; i++) {
        await noise.append(`noise-${i}`, Array.from({ length: 1000 }, (_, j) => ({ type: 'QueryRecorded', data: { n: j }, metadata: meta(i) })));
        if (i % 4 === 1) {
          const databaseId = randomUUID();
          await store.append(`database-${databaseId}`, [{ type: 'DatabaseCreated', data: { databaseId, name: `db${i}`, metadataSchema: [], embedder: { modelId: 'm', dimensions: 3 } }, metadata: meta(i) }]);
        }
      }
      await noise.append('noise-tail', [{ type: 'QueryRecorded', data: {}, metadata: meta(99) }]);
      const head = await store.headPosition();
      const rows = () => ds.query(`SELECT t::text AS r FROM rm_databases t ORDER BY 1`);

      const readAll = jest.spyOn(store, 'readAll');
      const runner = new ProjectionRunner(ds, store, [databasesProjection], log);
      await runner.migrate();
      const filtered = await runner.rebuild('databases');
      expect(readAll).not.toHaveBeenCalled();
      expect(filtered).toMatchObject({ events: 3, position: head });
      expect((await ds.query(`SELECT position FROM projection_checkpoints WHERE name = 'databases'`))[0].position).toBe(String(head));
      const afterFiltered = await rows();
      expect(afterFiltered).toHaveLength(3);

      // A store without the filter (EventStoreDB) reads everything and ends in the same place.
      const plain = { readAll: (o: any) => store.readAll(o), headPosition: () => store.headPosition() } as unknown as EventStore;
      const unfiltered = await new ProjectionRunner(ds, plain, [databasesProjection], log).rebuild('databases');
      expect(unfiltered).toMatchObject({ events: 3, position: head });
      expect(await rows()).toEqual(afterFiltered);
    } finally {
      await pool.end();
      await ds.destroy();
    }
  });
});

describe('rebuild', () => {
  it('replaces the live rows at commit with tables of the DDL\'s shape: readers see the old rows meanwhile, a swap that deadlocks with a reader is tried again, a failed rebuild changes nothing and leaves no schema', () =>
    withOneDatabase('rebuildswap', 'kept', async ({ ds, pool, store, log }) => {
      const runner = new ProjectionRunner(ds, store, [databasesProjection], log);
      await runner.migrate();
      await runner.rebuild('databases');
      // A read model that drifted from the log: a row no event made.
      const [row] = await ds.query(`SELECT * FROM rm_databases`);
      await ds.query(`INSERT INTO rm_databases SELECT (json_populate_record(NULL::rm_databases, $1::json)).*`, [JSON.stringify({ ...row, id: randomUUID(), name: 'drift' })]);
      const names = async () => (await ds.query(`SELECT name FROM rm_databases ORDER BY name`)).map((r: { name: string }) => r.name);
      expect(await names()).toEqual(['drift', 'kept']);
      const schemas = async () => (await ds.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'crs_rebuild%'`)).length;

      // Held half way: the replay has read the log; readers are not blocked and still see the live rows.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let reading!: () => void;
      const started = new Promise<void>((r) => (reading = r));
      const paused = Object.create(store, {
        readAllOfTypes: { value: async (...args: Parameters<NonNullable<typeof store.readAllOfTypes>>) => (reading(), await held, store.readAllOfTypes(...args)) },
      }) as typeof store;
      const rebuilding = new ProjectionRunner(ds, paused, [databasesProjection], log).rebuild('databases');
      await started;
      expect(await names()).toEqual(['drift', 'kept']);
      release();
      await expect(rebuilding).resolves.toMatchObject({ events: 1 });
      expect(await names()).toEqual(['kept']);
      expect(await schemas()).toBe(0);
      const indexes = await ds.query(`SELECT schemaname, indexname FROM pg_indexes WHERE tablename = 'rm_databases' ORDER BY indexname`);
      expect(indexes).toEqual([{ schemaname: 'public', indexname: 'rm_databases_org_name' }, { schemaname: 'public', indexname: 'rm_databases_pkey' }]);

      // A reader holding one live table and then asking for another the swap already holds: Postgres ends the
      // deadlock by aborting the swap (the reader's own check comes later), and only the swap is tried again.
      const reader = await pool.connect();
      try {
        await reader.query(`SET deadlock_timeout = '30s'`);
        await reader.query('BEGIN');
        await reader.query('SELECT count(*) FROM rm_collections');
        const swapping = new ProjectionRunner(ds, store, [databasesProjection], log).rebuild('databases');
        const waiting = async () => (await ds.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'rm_collections'::regclass`))[0].n;
        while ((await waiting()) === 0) await new Promise((r) => setTimeout(r, 10));
        await expect(reader.query('SELECT name FROM rm_databases ORDER BY name')).resolves.toMatchObject({ rows: [{ name: 'kept' }] });
        await reader.query('COMMIT');
        await expect(swapping).resolves.toMatchObject({ events: 1 });
      } finally {
        reader.release();
      }
      expect(await names()).toEqual(['kept']);
      expect(await schemas()).toBe(0);

      // A rebuild that fails part way leaves the live tables as they were, and no schema of its own.
      await ds.query(`UPDATE rm_databases SET name = 'edited'`);
      const failing = Object.create(store, { readAllOfTypes: { value: async () => Promise.reject(new Error('log unavailable')) } }) as typeof store;
      await expect(new ProjectionRunner(ds, failing, [databasesProjection], log).rebuild('databases')).rejects.toThrow('log unavailable');
      expect(await names()).toEqual(['edited']);
      expect(await schemas()).toBe(0);
    }));
});
