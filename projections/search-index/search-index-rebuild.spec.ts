import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import { replayTail } from './search-index-rebuild';
import type { PreparedBatch, SearchIndexSubscriber, WrittenItem } from './search-index.subscriber';

/** `n` handled events (ItemDeleted) at positions 1..n, interleaved with events the subscriber does not handle. */
function log(n: number): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  for (let i = 1; i <= n; i++) {
    events.push({
      type: i % 2 ? 'ItemDeleted' : 'StatusAdvanced',
      data: { databaseId: 'db', itemKey: `k${i}`, store: 'memory' },
      metadata: { eventId: `e${i}`, occurredAt: '2026-01-01T00:00:00Z', orgId: 'o', actor: 'cli' },
      stream: `s${i}`,
      revision: 0,
      position: i,
    } as unknown as RecordedEvent);
  }
  return events;
}

/** A log store that pages through `events`, with or without the typed read. */
function store(events: RecordedEvent[], typed: boolean): EventStore {
  const readAll = async ({ after = 0, maxCount = 100 }: { after?: number; maxCount?: number } = {}) => events.filter((e) => e.position > after).slice(0, maxCount);
  return {
    readAll,
    ...(typed
      ? {
          readAllOfTypes: async (after: number, types: readonly string[], maxCount: number) => {
            const page = events.filter((e) => e.position > after && types.includes(e.type)).slice(0, maxCount);
            return { events: page, scannedTo: page.length === maxCount ? page[page.length - 1].position : events[events.length - 1].position };
          },
        }
      : {}),
  } as unknown as EventStore;
}

/** A subscriber recording what it prepares and writes, and when each write ends. */
function subscriber(opts: { failPrepareAt?: number; writeMs?: number } = {}) {
  const seen = { prepared: [] as number[][], written: [] as number[][], writing: 0, writesEnded: [] as number[] };
  let calls = 0;
  const sub = {
    handles: ['ItemDeleted'],
    prepareBatch: async (events: RecordedEvent[]) => {
      calls++;
      if (calls === opts.failPrepareAt) throw new Error('prepare failed');
      seen.prepared.push(events.map((e) => e.position));
      return { upserts: [], deletes: events.map((e) => ({ index: 'i', itemKey: String(e.position), version: e.position })) } as PreparedBatch;
    },
    writePrepared: async (batch: PreparedBatch): Promise<WrittenItem[]> => {
      seen.writing++;
      await new Promise((r) => setTimeout(r, opts.writeMs ?? 0));
      seen.written.push(batch.deletes.map((d) => d.version));
      seen.writing--;
      seen.writesEnded.push(Date.now());
      return [];
    },
    dropSuperseded: async () => 0,
  };
  return { sub: sub as unknown as SearchIndexSubscriber, seen };
}

describe('search-index replay', () => {
  it.each([true, false])('writes every handled event once, in log order, and reaches the head (typed read: %s)', async (typed) => {
    const events = log(20_001); // 10,001 handled: three batches of up to 4,000
    const { sub, seen } = subscriber({ writeMs: 5 });
    const result = await replayTail(store(events, typed), sub, async () => null, 0);
    expect(result).toEqual({ position: 20_001, events: 10_001 });
    const handled = events.filter((e) => e.type === 'ItemDeleted').map((e) => e.position);
    expect(seen.written.map((b) => b.length)).toEqual([4000, 4000, 2001]);
    expect(seen.written.flat()).toEqual(handled);
    expect(seen.prepared.flat()).toEqual(handled);
  });

  it('when a batch fails to prepare, returns only after the batch being written has finished', async () => {
    const { sub, seen } = subscriber({ failPrepareAt: 2, writeMs: 200 });
    const failed = replayTail(store(log(20_001), true), sub, async () => null, 0);
    await expect(failed).rejects.toThrow('prepare failed');
    // The first batch's write, started before the second failed to prepare, is over: nothing writes after the failure.
    expect(seen.writing).toBe(0);
    expect(seen.written.map((b) => b.length)).toEqual([4000]);
  });
});
