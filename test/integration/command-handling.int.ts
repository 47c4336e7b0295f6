import { Pool } from 'pg';
import { handleMany, type StreamStateCache } from '@crs/eventstore/command-handling';
import { PostgresEventStore } from '@crs/eventstore/postgres/postgres-event-store';
import { createTestDatabase } from '../support/test-database';
import { uniqueStream } from './event-store.contract';

/** A counter per stream: state = number of Ticked events. */
type Tick = { type: 'Ticked'; data: { n: number } };
const fold = { initial: () => 0, evolve: (s: number, _e: Tick) => s + 1 };
const tick = (stream: string) => ({ stream, ctx: { orgId: 'o', actor: 'test' }, decide: (s: number): Tick[] => [{ type: 'Ticked', data: { n: s + 1 } }] });

describe('handleMany with a stream state cache', () => {
  let pool: Pool;
  let store: PostgresEventStore<Tick>;
  beforeAll(async () => {
    pool = new Pool({ connectionString: await createTestDatabase('command_handling'), max: 4 });
    await PostgresEventStore.migrate(pool);
    store = new PostgresEventStore<Tick>(pool);
  });
  afterAll(async () => {
    await store.close();
    await pool.end();
  });

  it('decides on cached state without reading the streams, and keeps the cache current', async () => {
    const a = uniqueStream('cache-a');
    const b = uniqueStream('cache-b');
    const cache: StreamStateCache<number> = new Map();
    await handleMany(store, fold, [tick(a), tick(b)], cache);
    expect(cache.get(a)).toEqual({ state: 1, revision: 0 });
    const reads = jest.spyOn(store, 'readStreams');
    try {
      await handleMany(store, fold, [tick(a), tick(b), tick(a)], cache);
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
    expect(cache.get(a)).toEqual({ state: 3, revision: 2 });
    expect((await store.readStream(a)).map((e) => e.data.n)).toEqual([1, 2, 3]);
    expect((await store.readStream(b)).map((e) => e.data.n)).toEqual([1, 2]);
  });

  it('a stale cache entry (another writer appended) fails the expected revision, then the batch is decided on a fresh read', async () => {
    const a = uniqueStream('stale-a');
    const cache: StreamStateCache<number> = new Map();
    await handleMany(store, fold, [tick(a)], cache);
    await handleMany(store, fold, [tick(a)]); // someone else, without the cache
    const out = await handleMany(store, fold, [tick(a)], cache);
    expect(out[0].error).toBeUndefined();
    expect((await store.readStream(a)).map((e) => e.data.n)).toEqual([1, 2, 3]);
    expect(cache.get(a)).toEqual({ state: 3, revision: 2 });
  });
});
