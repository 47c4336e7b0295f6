import { randomBytes, randomUUID } from 'node:crypto';
import {
  CHECKPOINT_EVENT,
  WrongExpectedRevisionError,
  type EventShape,
  type EventStore,
  type NewEvent,
  type RecordedEvent,
  type Subscription,
} from '@crs/eventstore/event-store.port';

/**
 * The events are the suite's own (`EventShape`: any type, any data), not the domain's: the contract is about the log.
 *
 * The event log contract, written once for every adapter: Postgres (every `npm test`), EventStoreDB (when
 * EVENTSTORE_URL names a server: `npm run test:production-adapters`), and the EventStoreDB adapter's write path on
 * an in-memory stand-in for its client (libs/eventstore/src/eventstoredb-event-store.spec.ts, some sections only).
 *
 * Stream names carry a random suffix and assertions on the whole log look only at the test's own
 * streams, because an EventStoreDB server is shared: there is no per-test database there.
 */
export type EventStoreContractSection =
  | 'append'
  | 'idempotent append by event id'
  | 'appendMany and readStreams'
  | 'readStream'
  | 'readAll and positions'
  | 'subscribeToAll with types'
  | 'subscribeToAll'
  | 'deleteStream';

export function describeEventStoreContract(
  name: string,
  factory: () => Promise<{ store: EventStore<EventShape>; cleanup(): Promise<void> }>,
  /** Only these sections (default: all). A run on a partial stand-in names the sections it covers. */
  only?: readonly EventStoreContractSection[],
): void {
  const section = (title: EventStoreContractSection, body: () => void): void => {
    if (!only || only.includes(title)) describe(title, body);
  };
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore<EventShape>;
    let cleanup: () => Promise<void>;
    const open: Subscription<EventShape>[] = [];

    beforeAll(async () => {
      ({ store, cleanup } = await factory());
    });

    afterEach(async () => {
      await Promise.all(open.splice(0).map((s) => s.close()));
    });

    afterAll(async () => {
      await cleanup?.();
    });

    const subscribe = (after: number, types?: string[]): Subscription<EventShape> => {
      const subscription = store.subscribeToAll({ after, types });
      open.push(subscription);
      return subscription;
    };

    section('append', () => {
      it('no_stream creates a stream and conflicts once it exists', async () => {
        const stream = uniqueStream('nostream');
        const first = await store.append(stream, [event('Created'), event('Renamed')], { expectedRevision: 'no_stream' });
        expect(first.nextRevision).toBe(1);

        const conflict = await store.append(stream, [event('Created')], { expectedRevision: 'no_stream' }).catch((e: unknown) => e);
        expect(conflict).toBeInstanceOf(WrongExpectedRevisionError);
        expect(conflict).toMatchObject({ code: 'WRONG_EXPECTED_REVISION', stream, expected: 'no_stream', actual: 1 });
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('stream_exists conflicts on a missing stream and passes on an existing one', async () => {
        const stream = uniqueStream('exists');
        const conflict = await store.append(stream, [event('Touched')], { expectedRevision: 'stream_exists' }).catch((e: unknown) => e);
        expect(conflict).toBeInstanceOf(WrongExpectedRevisionError);
        expect(conflict).toMatchObject({ stream, expected: 'stream_exists', actual: 'no_stream' });
        expect(await store.readStream(stream)).toEqual([]);

        await store.append(stream, [event('Created')], { expectedRevision: 'no_stream' });
        const result = await store.append(stream, [event('Touched')], { expectedRevision: 'stream_exists' });
        expect(result.nextRevision).toBe(1);
      });

      it('an exact revision passes when current and conflicts when stale, writing nothing', async () => {
        const stream = uniqueStream('exact');
        await store.append(stream, [event('Created')], { expectedRevision: 'no_stream' });
        const second = await store.append(stream, [event('Changed'), event('Changed')], { expectedRevision: 0 });
        expect(second.nextRevision).toBe(2);

        const stale = await store.append(stream, [event('Changed')], { expectedRevision: 0 }).catch((e: unknown) => e);
        expect(stale).toBeInstanceOf(WrongExpectedRevisionError);
        expect(stale).toMatchObject({ stream, expected: 0, actual: 2 });

        const missing = await store.append(uniqueStream('exact-missing'), [event('Changed')], { expectedRevision: 0 }).catch((e: unknown) => e);
        expect(missing).toBeInstanceOf(WrongExpectedRevisionError);
        expect(missing).toMatchObject({ expected: 0, actual: 'no_stream' });

        expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0, 1, 2]);
      });

      it('any appends whatever the stream state, and is the default', async () => {
        const stream = uniqueStream('any');
        expect((await store.append(stream, [event('A')], { expectedRevision: 'any' })).nextRevision).toBe(0);
        expect((await store.append(stream, [event('B')], { expectedRevision: 'any' })).nextRevision).toBe(1);
        expect((await store.append(stream, [event('C')])).nextRevision).toBe(2);
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B', 'C']);
      });

      it('returns the position of the last appended event', async () => {
        const stream = uniqueStream('result');
        const result = await store.append(stream, [event('A'), event('B'), event('C')]);
        const events = await store.readStream(stream);
        expect(result).toEqual({ nextRevision: 2, position: events[2].position });
      });
    });

    section('idempotent append by event id', () => {
      it('the same events appended twice are stored once, with the same result', async () => {
        const stream = uniqueStream('idem');
        const batch = [event('Created'), event('Renamed')];
        const first = await store.append(stream, batch, { expectedRevision: 'no_stream' });
        const retry = await store.append(stream, batch, { expectedRevision: 'no_stream' });
        expect(retry).toEqual(first);
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('a retry with an exact revision succeeds even though the stream moved on', async () => {
        const stream = uniqueStream('idem-exact');
        await store.append(stream, [event('Created')], { expectedRevision: 'no_stream' });
        const batch = [event('Changed')];
        const first = await store.append(stream, batch, { expectedRevision: 0 });
        const retry = await store.append(stream, batch, { expectedRevision: 0 });
        expect(retry).toEqual(first);
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('a retry with any is stored once', async () => {
        const stream = uniqueStream('idem-any');
        const batch = [event('Noted')];
        const first = await store.append(stream, batch, { expectedRevision: 'any' });
        const retry = await store.append(stream, batch, { expectedRevision: 'any' });
        expect(retry).toEqual(first);
        expect(await store.readStream(stream)).toHaveLength(1);
      });
    });

    section('appendMany and readStreams', () => {
      it('appends to several streams with their own expectations, results in request order, positions increasing', async () => {
        const a = uniqueStream('many-a');
        const b = uniqueStream('many-b');
        await store.append(b, [event('First')]);
        const results = await store.appendMany([
          { stream: a, events: [event('A1'), event('A2')], expectedRevision: 'no_stream' },
          { stream: b, events: [event('B2')], expectedRevision: 0 },
        ]);
        expect(results.map((r) => r.nextRevision)).toEqual([1, 1]);
        expect(results[1].position).toBeGreaterThan(results[0].position);
        const read = await store.readStreams([a, b, a]);
        expect([...read.keys()].sort()).toEqual([a, b].sort());
        expect(read.get(a)!.map((e) => e.type)).toEqual(['A1', 'A2']);
        expect(read.get(b)!.map((e) => e.type)).toEqual(['First', 'B2']);
        expect(read.get(a)![1].position).toBe(results[0].position);
      });

      it('a conflicting request throws WrongExpectedRevisionError naming that stream', async () => {
        const a = uniqueStream('many-ok');
        const b = uniqueStream('many-conflict');
        await store.append(b, [event('Exists')]);
        const conflict = await store.appendMany([
          { stream: a, events: [event('A')], expectedRevision: 'no_stream' },
          { stream: b, events: [event('B')], expectedRevision: 'no_stream' },
        ]).catch((e: unknown) => e);
        expect(conflict).toBeInstanceOf(WrongExpectedRevisionError);
        expect(conflict).toMatchObject({ stream: b, expected: 'no_stream', actual: 0 });
        expect((await store.readStream(b)).map((e) => e.type)).toEqual(['Exists']);
        // All or nothing: the request before the stale one wrote nothing either.
        expect(await store.readStream(a)).toEqual([]);
      });

      it('a retried batch is stored once and answers as before', async () => {
        const a = uniqueStream('many-retry-a');
        const b = uniqueStream('many-retry-b');
        const batch = [
          { stream: a, events: [event('A')], expectedRevision: 'no_stream' as const },
          { stream: b, events: [event('B1'), event('B2')], expectedRevision: 'no_stream' as const },
        ];
        const first = await store.appendMany(batch);
        const again = await store.appendMany(batch);
        expect(again).toEqual(first);
        expect(await store.readStream(a)).toHaveLength(1);
        expect(await store.readStream(b)).toHaveLength(2);
      });

      it('a stream named twice in one batch: the second request builds on the first', async () => {
        const a = uniqueStream('many-twice-a');
        const b = uniqueStream('many-twice-b');
        const results = await store.appendMany([
          { stream: a, events: [event('A1')], expectedRevision: 'no_stream' },
          { stream: b, events: [event('B1')], expectedRevision: 'any' },
          { stream: a, events: [event('A2'), event('A3')], expectedRevision: 0 },
        ]);
        expect(results.map((r) => r.nextRevision)).toEqual([0, 0, 2]);
        expect(results[2].position).toBeGreaterThan(results[1].position);
        expect((await store.readStream(a)).map((e) => [e.type, e.revision])).toEqual([['A1', 0], ['A2', 1], ['A3', 2]]);
        const stale = await store.appendMany([
          { stream: b, events: [event('B2')], expectedRevision: 0 },
          { stream: b, events: [event('B3')], expectedRevision: 0 },
        ]).catch((e: unknown) => e);
        expect(stale).toMatchObject({ stream: b, expected: 0, actual: 1 });
        expect((await store.readStream(b)).map((e) => e.type)).toEqual(['B1']);
      });

      it('mixes a retried request, an empty one and new ones, answering each as a single append would', async () => {
        const done = uniqueStream('many-mix-done');
        const fresh = uniqueStream('many-mix-fresh');
        const empty = uniqueStream('many-mix-empty');
        const retried = [event('D1'), event('D2')];
        const first = await store.append(done, retried, { expectedRevision: 'no_stream' });
        await store.append(empty, [event('E1')]);
        const results = await store.appendMany([
          { stream: fresh, events: [event('F1')], expectedRevision: 'no_stream' },
          { stream: done, events: retried, expectedRevision: 'no_stream' },
          { stream: empty, events: [], expectedRevision: 0 },
        ]);
        expect(results[1]).toEqual(first);
        expect(results[2].nextRevision).toBe(0);
        expect(results[0].nextRevision).toBe(0);
        expect(await store.readStream(done)).toHaveLength(2);
        const emptyConflict = await store.appendMany([{ stream: empty, events: [], expectedRevision: 'no_stream' }]).catch((e: unknown) => e);
        expect(emptyConflict).toBeInstanceOf(WrongExpectedRevisionError);
      });

      it('readStreams maps a missing stream to [] and an empty list to an empty map', async () => {
        const missing = uniqueStream('many-missing');
        expect((await store.readStreams([missing])).get(missing)).toEqual([]);
        expect((await store.readStreams([])).size).toBe(0);
        expect(await store.appendMany([])).toEqual([]);
      });
    });

    section('readStream', () => {
      let stream: string;
      let written: NewEvent<EventShape>[];

      beforeAll(async () => {
        stream = uniqueStream('read');
        written = [0, 1, 2, 3, 4].map((n) => event('Numbered', { n, nested: { list: [n, 'x'] } }));
        await store.append(stream, written, { expectedRevision: 'no_stream' });
      });

      it('reads forwards by default, with type, data, metadata and positions', async () => {
        const events = await store.readStream(stream);
        expect(events.map((e) => e.revision)).toEqual([0, 1, 2, 3, 4]);
        events.forEach((e, i) => {
          expect(e).toMatchObject({ stream, type: 'Numbered', data: written[i].data, metadata: written[i].metadata });
          expect(typeof e.position).toBe('number');
          expect(typeof e.revision).toBe('number');
        });
        expectStrictlyIncreasing(events.map((e) => e.position));
      });

      it('reads forwards from a revision (inclusive) with maxCount', async () => {
        expect(revisions(await store.readStream(stream, { fromRevision: 2 }))).toEqual([2, 3, 4]);
        expect(revisions(await store.readStream(stream, { maxCount: 2 }))).toEqual([0, 1]);
        expect(revisions(await store.readStream(stream, { fromRevision: 1, maxCount: 2 }))).toEqual([1, 2]);
        expect(revisions(await store.readStream(stream, { fromRevision: 9 }))).toEqual([]);
      });

      it('reads backwards from the end or from a revision (inclusive) with maxCount', async () => {
        expect(revisions(await store.readStream(stream, { direction: 'backwards' }))).toEqual([4, 3, 2, 1, 0]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards', maxCount: 2 }))).toEqual([4, 3]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards', fromRevision: 3, maxCount: 2 }))).toEqual([3, 2]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards', fromRevision: 1 }))).toEqual([1, 0]);
      });

      it('returns [] for a stream that does not exist', async () => {
        const missing = uniqueStream('missing');
        expect(await store.readStream(missing)).toEqual([]);
        expect(await store.readStream(missing, { direction: 'backwards' })).toEqual([]);
      });
    });

    section('readAll and positions', () => {
      it('reads strictly after a position, with maxCount', async () => {
        // Positions are opaque (EventStoreDB: log offsets), so `after` is always one the store gave out.
        const before = await store.headPosition();
        const stream = uniqueStream('all');
        await store.append(stream, [event('A'), event('B'), event('C')]);
        const [a, b, c] = await store.readStream(stream);

        const afterA = own(await store.readAll({ after: a.position }), [stream]);
        expect(afterA.map((e) => e.type)).toEqual(['B', 'C']);
        expect(await store.readAll({ after: a.position, maxCount: 1 })).toEqual([b]);
        expect(await store.readAll({ after: b.position, maxCount: 1 })).toEqual([c]);
        expect(own(await store.readAll({ after: c.position }), [stream])).toEqual([]);
        expect(own(await store.readAll({ after: before }), [stream])).toEqual([a, b, c]);
      });

      it('gives strictly increasing global positions across streams, in append order', async () => {
        const before = await store.headPosition();
        const [s1, s2, s3] = [uniqueStream('pos'), uniqueStream('pos'), uniqueStream('pos')];
        const order: Array<[string, string]> = [
          [s1, 'One'],
          [s2, 'Two'],
          [s1, 'Three'],
          [s3, 'Four'],
          [s2, 'Five'],
        ];
        const results = [];
        for (const [stream, type] of order) results.push(await store.append(stream, [event(type)]));
        expectStrictlyIncreasing(results.map((r) => r.position));

        const all = own(await store.readAll({ after: before }), [s1, s2, s3]);
        expect(all.map((e) => [e.stream, e.type])).toEqual(order);
        expect(all.map((e) => e.position)).toEqual(results.map((r) => r.position));
      });

      it('headPosition is the position of the newest event', async () => {
        const first = await store.append(uniqueStream('head'), [event('A')]);
        expect(await store.headPosition()).toBe(first.position);
        const second = await store.append(uniqueStream('head'), [event('B'), event('C')]);
        expect(await store.headPosition()).toBe(second.position);
        expect(second.position).toBeGreaterThan(first.position);
      });
    });

    section('subscribeToAll with types', () => {
      it('delivers every event of those types in order; markers and positions let the consumer reach the head', async () => {
        const start = await store.headPosition();
        const a = uniqueStream('typed-a');
        const b = uniqueStream('typed-b');
        await store.append(a, [event('Wanted'), event('Other'), event('Wanted')]);
        await store.append(b, [event('Other'), event('Other')]);
        const last = await store.append(b, [event('Wanted')]);
        await store.append(a, [event('Other')]);
        const head = await store.headPosition();
        const subscription = subscribe(start, ['Wanted']);
        const seen: RecordedEvent<EventShape>[] = [];
        let reached = start;
        for await (const e of subscription) {
          seen.push(e);
          reached = Math.max(reached, e.position);
          if (reached >= head) break;
        }
        const wanted = own(seen, [a, b]).filter((e) => e.type === 'Wanted');
        expect(wanted).toHaveLength(3);
        expect(wanted[2].position).toBe(last.position);
        expectStrictlyIncreasing(seen.map((e) => e.position));
        for (const e of seen) expect(['Wanted', 'Other', CHECKPOINT_EVENT].includes(e.type) || !own([e], [a, b]).length).toBe(true);
      });
    });

    section('subscribeToAll', () => {
      it('catches up from a checkpoint, then delivers live events in order, none skipped or repeated', async () => {
        const stream = uniqueStream('sub');
        await store.append(stream, [event('Old0'), event('Old1'), event('Old2')]);
        const [checkpoint] = await store.readStream(stream);

        const subscription = subscribe(checkpoint.position);
        const iterator = subscription[Symbol.asyncIterator]();
        const old = await take(iterator, 2, [stream]);
        expect(old.map((e) => e.type)).toEqual(['Old1', 'Old2']);

        // Caught up: these arrive only through the live path (wake-up or server push).
        await store.append(stream, [event('Live3')]);
        await store.append(stream, [event('Live4'), event('Live5')]);
        const live = await take(iterator, 3, [stream]);
        expect(live.map((e) => e.type)).toEqual(['Live3', 'Live4', 'Live5']);

        const received = [...old, ...live];
        expect(received.map((e) => e.revision)).toEqual([1, 2, 3, 4, 5]);
        expectStrictlyIncreasing(received.map((e) => e.position));
        expect(received).toEqual(await store.readStream(stream, { fromRevision: 1 }));
      });

      it('sees every event from concurrent writers once, in strictly increasing position order', async () => {
        const writers = 5;
        const perWriter = 20;
        const streams = Array.from({ length: writers }, () => uniqueStream('concurrent'));
        const subscription = subscribe(await store.headPosition());
        const iterator = subscription[Symbol.asyncIterator]();
        const receiving = take(iterator, writers * perWriter, streams, 20_000);

        const ids = new Set<string>();
        await Promise.all(
          streams.map(async (stream) => {
            for (let i = 0; i < perWriter; i++) {
              const e = event('Counted', { i });
              ids.add(e.metadata.eventId);
              await store.append(stream, [e], { expectedRevision: i === 0 ? 'no_stream' : i - 1 });
            }
          }),
        );

        const received = await receiving;
        expect(received).toHaveLength(writers * perWriter);
        expectStrictlyIncreasing(received.map((e) => e.position));
        expect(new Set(received.map((e) => e.metadata.eventId))).toEqual(ids);
        for (const stream of streams) {
          expect(received.filter((e) => e.stream === stream).map((e) => e.revision)).toEqual(Array.from({ length: perWriter }, (_, i) => i));
        }
      });

      it('close() ends the iteration, also while it waits for new events', async () => {
        const stream = uniqueStream('close');
        const before = await store.headPosition();
        await store.append(stream, [event('Only')]);
        const [only] = await store.readStream(stream);
        const subscription = subscribe(before);
        const iterator = subscription[Symbol.asyncIterator]();
        expect(await take(iterator, 1, [stream])).toEqual([only]);

        const pending = nextOwn(iterator, [stream]);
        await new Promise((r) => setTimeout(r, 50));
        await subscription.close();
        await expect(withTimeout(pending, 5_000, 'iteration did not end on close()')).resolves.toEqual({ done: true, value: undefined });
      });
    });

    section('deleteStream', () => {
      it('removes the stream from reads and from the log, leaving other streams untouched', async () => {
        const before = await store.headPosition();
        const doomed = uniqueStream('doomed');
        const kept = uniqueStream('kept');
        await store.append(doomed, [event('Secret', { text: 'confidential' }), event('Secret', { text: 'more' })]);
        await store.append(kept, [event('Public'), event('Public')]);
        const keptEvents = await store.readStream(kept);

        await store.deleteStream(doomed);

        expect(await store.readStream(doomed)).toEqual([]);
        expect(await store.readStream(doomed, { direction: 'backwards' })).toEqual([]);
        expect(await store.readStream(kept)).toEqual(keptEvents);
        expect(own(await store.readAll({ after: before }), [doomed, kept])).toEqual(keptEvents);

        // A subscription replaying that range sees only the surviving stream.
        const iterator = subscribe(before)[Symbol.asyncIterator]();
        expect(await take(iterator, 2, [doomed, kept])).toEqual(keptEvents);
      });

      it('lets a deleted stream be written again, showing only the new events', async () => {
        const stream = uniqueStream('recreated');
        await store.append(stream, [event('Old')]);
        await store.deleteStream(stream);
        await store.append(stream, [event('New')], { expectedRevision: 'any' });
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['New']);
      });

      it('deleting a stream that does not exist is a no-op', async () => {
        await expect(store.deleteStream(uniqueStream('never'))).resolves.toBeUndefined();
      });
    });
  });
}

export function uniqueStream(category: string): string {
  return `contract_${category}-${randomBytes(6).toString('hex')}`;
}

export function event(type: string, data: unknown = { at: type }): NewEvent<EventShape> {
  return {
    type,
    data,
    metadata: { eventId: randomUUID(), occurredAt: new Date().toISOString(), orgId: 'org-contract', actor: 'system:contract-test' },
  };
}

function revisions(events: RecordedEvent<EventShape>[]): number[] {
  return events.map((e) => e.revision);
}

function own(events: RecordedEvent<EventShape>[], streams: string[]): RecordedEvent<EventShape>[] {
  return events.filter((e) => streams.includes(e.stream));
}

function expectStrictlyIncreasing(values: number[]): void {
  values.slice(1).forEach((v, i) => {
    if (!(v > values[i])) throw new Error(`positions not strictly increasing at ${i + 1}: ${values.join(', ')}`);
  });
}

async function nextOwn(iterator: AsyncIterator<RecordedEvent<EventShape>>, streams: string[]): Promise<IteratorResult<RecordedEvent<EventShape>>> {
  for (;;) {
    const next = await iterator.next();
    if (next.done || streams.includes(next.value.stream)) return next;
  }
}

/** Pulls until `count` events of the given streams arrived (others on a shared server are skipped). */
async function take(iterator: AsyncIterator<RecordedEvent<EventShape>>, count: number, streams: string[], timeoutMs = 10_000): Promise<RecordedEvent<EventShape>[]> {
  const received: RecordedEvent<EventShape>[] = [];
  const pull = async (): Promise<RecordedEvent<EventShape>[]> => {
    while (received.length < count) {
      const next = await nextOwn(iterator, streams);
      if (next.done) throw new Error(`subscription ended after ${received.length} of ${count} events`);
      received.push(next.value);
    }
    return received;
  };
  return withTimeout(pull(), timeoutMs, () => `timed out with ${received.length} of ${count} events`);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(typeof message === 'string' ? message : message())), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
