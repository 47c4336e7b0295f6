import { describeEventStoreContract, event, uniqueStream } from '@crs/test/integration/event-store.contract';
import { KurrentClientModel } from '@crs/test/support/kurrentdb-client-model';
import type { EventShape } from './event-store.port';
import { EventStoreDbEventStore } from './eventstoredb-event-store';

/**
 * The adapter's write path against an in-memory stand-in for the KurrentDB client (test/support): the contract's
 * append, idempotency, appendMany and readStream sections, and what the stand-in lets us pin down beyond them.
 * A stand-in is not the server: the full contract against one is test/integration/event-store.eventstoredb.int.ts.
 */
describeEventStoreContract(
  'eventstoredb adapter on an in-memory stand-in for its client (not a server)',
  async () => {
    const store = new EventStoreDbEventStore<EventShape>(new KurrentClientModel().asClient());
    return { store, cleanup: () => store.close() };
  },
  ['append', 'idempotent append by event id', 'appendMany and readStreams', 'readStream'],
);

describe('EventStoreDbEventStore.appendMany', () => {
  let model: KurrentClientModel;
  let store: EventStoreDbEventStore<EventShape>;

  beforeEach(() => {
    model = new KurrentClientModel();
    store = new EventStoreDbEventStore<EventShape>(model.asClient());
  });

  it('writes every stream in one multi-stream append, never one stream after another', async () => {
    const [a, b, c] = [uniqueStream('one-a'), uniqueStream('one-b'), uniqueStream('one-c')];
    await store.appendMany([
      { stream: a, events: [event('A')], expectedRevision: 'no_stream' },
      { stream: b, events: [event('B1'), event('B2')], expectedRevision: 'no_stream' },
      { stream: c, events: [event('C')], expectedRevision: 'any' },
    ]);
    expect(model.calls).toEqual([`multiStreamAppend ${a},${b},${c}`]);
  });

  it('a stale request on one stream leaves every stream of the batch as it was', async () => {
    const [a, b] = [uniqueStream('stale-a'), uniqueStream('stale-b')];
    await store.append(a, [event('A0')]);
    await store.append(b, [event('B0'), event('B1')]);
    const conflict = await store
      .appendMany([
        { stream: a, events: [event('A1')], expectedRevision: 0 },
        { stream: b, events: [event('B2')], expectedRevision: 0 },
      ])
      .catch((e: unknown) => e);
    expect(conflict).toMatchObject({ code: 'WRONG_EXPECTED_REVISION', stream: b, expected: 0, actual: 1 });
    expect((await store.readStream(a)).map((e) => e.type)).toEqual(['A0']);
    expect((await store.readStream(b)).map((e) => e.type)).toEqual(['B0', 'B1']);
  });

  it('a stream named twice is one records append, in request order, its check pinned to the revision read', async () => {
    const [a, b] = [uniqueStream('twice-a'), uniqueStream('twice-b')];
    await store.append(a, [event('A0')]);
    const results = await store.appendMany([
      { stream: a, events: [event('A1')], expectedRevision: 'stream_exists' },
      { stream: b, events: [event('B0')], expectedRevision: 'no_stream' },
      { stream: a, events: [event('A2')], expectedRevision: 1 },
    ]);
    expect(results.map((r) => r.nextRevision)).toEqual([1, 0, 2]);
    expect(results[2].position).toBeGreaterThan(results[1].position);
    expect(model.calls.filter((c) => c.startsWith('append'))).toEqual([`appendToStream ${a}`, `appendRecords ${a},${b},${a} checks ${a}@0,${b}@no_stream`]);
  });

  it('a check-only request is checked inside the write', async () => {
    const [a, b] = [uniqueStream('check-a'), uniqueStream('check-b')];
    await store.append(b, [event('B0')]);
    const results = await store.appendMany([
      { stream: a, events: [event('A0')], expectedRevision: 'no_stream' },
      { stream: b, events: [], expectedRevision: 0 },
    ]);
    expect(results.map((r) => r.nextRevision)).toEqual([0, 0]);
    expect(model.calls[model.calls.length - 1]).toBe(`appendRecords ${a} checks ${a}@no_stream,${b}@0`);
  });

  it('refuses on a server without multi-stream append, naming the version it needs, and writes nothing', async () => {
    model.serverVersion = '24.10';
    const [a, b] = [uniqueStream('old-a'), uniqueStream('old-b')];
    await expect(
      store.appendMany([
        { stream: a, events: [event('A')], expectedRevision: 'no_stream' },
        { stream: b, events: [event('B')], expectedRevision: 'no_stream' },
      ]),
    ).rejects.toThrow(/multiStreamAppend \(KurrentDB 25\.1 or later\)/);
    expect(await store.readStream(a)).toEqual([]);
    expect(await store.readStream(b)).toEqual([]);
  });

  it('on KurrentDB 25.1 writes each stream once as the service does, and refuses a batch that needs the records append', async () => {
    model.serverVersion = '25.1';
    const [a, b] = [uniqueStream('v25-a'), uniqueStream('v25-b')];
    const results = await store.appendMany([
      { stream: a, events: [event('A0')], expectedRevision: 'no_stream' },
      { stream: b, events: [event('B0')], expectedRevision: 'no_stream' },
    ]);
    expect(results.map((r) => r.nextRevision)).toEqual([0, 0]);
    await expect(
      store.appendMany([
        { stream: a, events: [event('A1')], expectedRevision: 0 },
        { stream: a, events: [event('A2')], expectedRevision: 1 },
      ]),
    ).rejects.toThrow(/appendRecords \(KurrentDB 26\.1 or later\)/);
    expect((await store.readStream(a)).map((e) => e.type)).toEqual(['A0']);
  });

  it('sends metadata as string properties and reads it back without the server\'s $schema properties', async () => {
    const a = uniqueStream('meta');
    const e = event('Noted');
    await store.appendMany([{ stream: a, events: [e], expectedRevision: 'no_stream' }]);
    const [read] = await store.readStream(a);
    expect(read.metadata).toEqual(e.metadata);
  });

  it('refuses metadata that is not a string, naming the key, before anything is sent', async () => {
    const a = uniqueStream('meta-number');
    const e = event('Noted');
    (e.metadata as Record<string, unknown>).attempt = 3;
    await expect(store.appendMany([{ stream: a, events: [e], expectedRevision: 'no_stream' }])).rejects.toThrow(/metadata\.attempt of Noted is a number/);
    expect(model.calls.filter((c) => c.startsWith('multiStreamAppend'))).toEqual([]);
  });
});
