import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamDeletedError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type JSONType,
  type Position,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
  type StreamingRead,
} from '@eventstore/db-client';
import {
  WrongExpectedRevisionError,
  type AppendRequest,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type Subscription,
} from './event-store.port';

export interface EventStoreDbEventStoreOptions {
  /** How long a subscription trusts a stream's deletion marker ($tb) before reading it again. Default 1000 ms. */
  deletionCacheMs?: number;
}

const PAGE = 500;

/**
 * EventStoreDB event log (production). Global position = the event's `$all` commit position as a
 * JS number (exact below 2^53 bytes of log); `after` is exclusive everywhere.
 *
 * Deletion is a soft delete (`deleteStream`, not `tombstoneStream`): reads of the stream see no
 * stream at once and the stream can be re-created later (its revisions then continue after the old
 * last one). The server keeps the old events in `$all` until a scavenge removes them, so this adapter
 * hides them itself: an event is shown only when its revision is at or above the stream's truncate-
 * before (`$tb`) marker, which a soft delete sets. Content is physically gone after the next scavenge.
 */
export class EventStoreDbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;
  private readonly ownsClient: boolean;
  private readonly subscriptions = new Set<EventStoreDbSubscription>();

  /** A connection string (`esdb://host:2113?tls=false`) makes a client this store owns; a client passed in stays the caller's. */
  constructor(
    clientOrConnectionString: EventStoreDBClient | string,
    private readonly options: EventStoreDbEventStoreOptions = {},
  ) {
    if (typeof clientOrConnectionString === 'string') {
      this.client = EventStoreDBClient.connectionString(clientOrConnectionString);
      this.ownsClient = true;
    } else {
      this.client = clientOrConnectionString;
      this.ownsClient = false;
    }
  }

  async append(stream: string, events: NewEvent[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    const expected = options.expectedRevision ?? 'any';
    if (events.length === 0) return this.checkOnly(stream, expected);
    try {
      const result = await this.client.appendToStream(
        stream,
        events.map((e) =>
          jsonEvent({
            id: e.metadata.eventId,
            type: e.type,
            data: (e.data ?? null) as JSONType,
            metadata: e.metadata as unknown as JSONType,
          }),
        ),
        { expectedRevision: toEsdbExpected(expected) },
      );
      if (!result.success) {
        // Connection string set `throwOnAppendFailure=false`: the conflict comes back as a value.
        return await this.onConflict(stream, events, expected, undefined);
      }
      const nextRevision = Number(result.nextExpectedRevision);
      // An idempotent retry may come back without a position: look the event up.
      const position = result.position ? Number(result.position.commit) : await this.positionOf(stream, nextRevision);
      return { nextRevision, position };
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) {
        return this.onConflict(stream, events, expected, typeof err.actualVersion === 'bigint' ? Number(err.actualVersion) : undefined);
      }
      throw err;
    }
  }

  /**
   * The server already treats retries with an exact / no_stream expectation as idempotent; this
   * catches the rest (e.g. a retry after the stream moved on), as the Postgres adapter does.
   */
  private async onConflict(stream: string, events: NewEvent[], expected: ExpectedRevision, actual: number | undefined): Promise<AppendResult> {
    const existing = await this.findAppended(stream, events.map((e) => e.metadata.eventId));
    if (existing) return existing;
    if (actual === undefined) {
      const [last] = await this.readStream(stream, { direction: 'backwards', maxCount: 1 });
      actual = last?.revision;
    }
    throw new WrongExpectedRevisionError(stream, expected, actual ?? 'no_stream');
  }

  /** No multi-stream transaction on EventStoreDB: one append after the other (see the port). */
  async appendMany(requests: AppendRequest[]): Promise<AppendResult[]> {
    const results: AppendResult[] = [];
    for (const r of requests) results.push(await this.append(r.stream, r.events, { expectedRevision: r.expectedRevision }));
    return results;
  }

  async readStreams(streams: string[]): Promise<Map<string, RecordedEvent[]>> {
    const unique = [...new Set(streams)];
    const read = await Promise.all(unique.map((s) => this.readStream(s)));
    return new Map(unique.map((s, i) => [s, read[i]]));
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    const backwards = options.direction === 'backwards';
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(stream, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: options.fromRevision !== undefined ? BigInt(options.fromRevision) : backwards ? END : START,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of drain(read)) {
        if (resolved.event) out.push(toRecordedEvent(resolved.event, resolved.commitPosition));
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError || err instanceof StreamDeletedError) return [];
      throw err;
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    const out: RecordedEvent[] = [];
    if (max <= 0) return out;
    for await (const event of this.scanAll('forwards', options.after ?? 0)) {
      out.push(event);
      if (out.length >= max) break;
    }
    return out;
  }

  /** `types` is not applied here (allowed by the port): every event is delivered, and no checkpoint markers are needed. */
  subscribeToAll(options: { after?: number; types?: readonly string[] } = {}): Subscription {
    const subscription = new EventStoreDbSubscription(this, this.client, options.after ?? 0, this.options.deletionCacheMs ?? 1000, (s) =>
      this.subscriptions.delete(s),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Soft delete (see the class comment); deleting a stream that does not exist is a no-op. */
  async deleteStream(stream: string): Promise<void> {
    try {
      await this.client.deleteStream(stream, { expectedRevision: ANY });
    } catch (err) {
      // The server answers WrongExpectedVersion (even for ANY) when the stream never existed.
      if (err instanceof WrongExpectedVersionError || err instanceof StreamNotFoundError) return;
      throw err;
    }
  }

  async headPosition(): Promise<number> {
    for await (const event of this.scanAll('backwards', 0)) return event.position;
    return 0;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    if (this.ownsClient) await this.client.dispose();
  }

  /**
   * Whether an `$all` event is still part of the log: user events only, and not below its
   * stream's truncate-before marker. `cache` maps stream → [$tb, read at ms].
   */
  async isVisible(event: EsdbRecordedEvent, cache: Map<string, [number, number]>, maxAgeMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    if (isSystem(event)) return false;
    const now = Date.now();
    let entry = cache.get(event.streamId);
    if (!entry || now - entry[1] > maxAgeMs) {
      entry = [await this.truncateBefore(event.streamId), now];
      if (cache.size > 10_000) cache.clear();
      cache.set(event.streamId, entry);
    }
    return Number(event.revision) >= entry[0];
  }

  /**
   * User events strictly after (forwards) or before (backwards) `from`, in `$all` order, read in
   * pages so no server call stays open longer than one page. `from` 0 means the start / the end.
   */
  private async *scanAll(direction: 'forwards' | 'backwards', from: number): AsyncGenerator<RecordedEvent> {
    const forwards = direction === 'forwards';
    const cache = new Map<string, [number, number]>();
    let cursor: ReadPosition = from > 0 ? { commit: BigInt(from), prepare: BigInt(from) } : forwards ? START : END;
    let bound = from;
    for (;;) {
      let seen = 0;
      let last: Position | undefined;
      const read = this.client.readAll({ fromPosition: cursor, direction: forwards ? FORWARDS : BACKWARDS, maxCount: PAGE });
      for await (const resolved of drain(read)) {
        seen++;
        const event = resolved.event;
        if (!event) continue;
        last = event.position;
        const commit = Number(event.position.commit);
        // Reads from a position include the event at it; `after` is exclusive.
        if (bound > 0 && (forwards ? commit <= bound : commit >= bound)) continue;
        if (!(await this.isVisible(event, cache))) continue;
        yield toRecordedEvent(event, resolved.commitPosition);
      }
      if (seen < PAGE || !last) return;
      cursor = last;
      bound = Number(last.commit);
    }
  }

  private async truncateBefore(stream: string): Promise<number> {
    try {
      const { metadata } = await this.client.getStreamMetadata(stream);
      const tb = metadata?.truncateBefore;
      if (tb === undefined || tb === START) return 0;
      if (tb === END) return Number.POSITIVE_INFINITY;
      return Number(tb);
    } catch (err) {
      if (err instanceof StreamDeletedError) return Number.POSITIVE_INFINITY; // tombstoned
      throw err;
    }
  }

  private async checkOnly(stream: string, expected: ExpectedRevision): Promise<AppendResult> {
    const [last] = await this.readStream(stream, { direction: 'backwards', maxCount: 1 });
    const current = last ? last.revision : null;
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && current === null) ||
      (expected === 'stream_exists' && current !== null) ||
      (typeof expected === 'number' && current === expected);
    if (!ok) throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
    return { nextRevision: current ?? -1, position: last ? last.position : 0 };
  }

  private async positionOf(stream: string, revision: number): Promise<number> {
    const [event] = await this.readStream(stream, { fromRevision: revision, maxCount: 1 });
    if (!event) throw new Error(`EventStoreDB: appended event ${stream}@${revision} not found`);
    return event.position;
  }

  /** The result of an earlier append of these events, when the first of them is already in the stream. */
  private async findAppended(stream: string, eventIds: string[]): Promise<AppendResult | undefined> {
    const wanted = new Set(eventIds);
    let firstFound = false;
    let result: AppendResult | undefined;
    const events = await this.readStreamRaw(stream);
    for (const event of events) {
      if (!wanted.has(event.id)) continue;
      if (event.id === eventIds[0]) firstFound = true;
      const position = Number(event.position?.commit ?? -1);
      const revision = Number(event.revision);
      if (!result || revision > result.nextRevision) result = { nextRevision: revision, position };
    }
    if (!firstFound || !result) return undefined;
    if (result.position < 0) result.position = await this.positionOf(stream, result.nextRevision);
    return result;
  }

  private async readStreamRaw(stream: string): Promise<EsdbRecordedEvent[]> {
    const out: EsdbRecordedEvent[] = [];
    try {
      for await (const resolved of drain(this.client.readStream(stream, { direction: BACKWARDS, fromRevision: END }))) {
        if (resolved.event) out.push(resolved.event);
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError || err instanceof StreamDeletedError) return [];
      throw err;
    }
    return out;
  }
}

/** Catch-up subscription on `$all`, server-side filtered to user events; the gRPC stream applies back-pressure. */
class EventStoreDbSubscription implements Subscription {
  private closed = false;
  private subscription: AllStreamSubscription | undefined;
  private iterator: AsyncGenerator<RecordedEvent> | undefined;
  private readonly deletions = new Map<string, [number, number]>();

  constructor(
    private readonly store: EventStoreDbEventStore,
    private readonly client: EventStoreDBClient,
    private readonly after: number,
    private readonly deletionCacheMs: number,
    private readonly onClose: (s: EventStoreDbSubscription) => void,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    this.iterator ??= this.run();
    return this.iterator;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
    await this.stop();
  }

  private async *run(): AsyncGenerator<RecordedEvent> {
    if (this.closed) return;
    // Subscriptions from a position are exclusive on the server; the check below makes it explicit.
    const subscription = this.client.subscribeToAll({
      fromPosition: this.after > 0 ? { commit: BigInt(this.after), prepare: BigInt(this.after) } : START,
      filter: excludeSystemEvents(),
    });
    this.subscription = subscription;
    try {
      for await (const resolved of subscription) {
        if (this.closed) return;
        const event = resolved.event;
        if (!event?.position) continue;
        if (Number(event.position.commit) <= this.after) continue;
        if (!(await this.store.isVisible(event, this.deletions, this.deletionCacheMs))) continue;
        yield toRecordedEvent(event, resolved.commitPosition);
      }
    } catch (err) {
      if (!this.closed) throw err; // destroying the stream on close() ends the loop with an error
    } finally {
      await this.stop();
    }
  }

  private async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    if (!subscription) return;
    await subscription.unsubscribe().catch(() => undefined);
    subscription.destroy();
  }
}

/** Iterates a server read and cancels the underlying call if the consumer stops early. */
async function* drain<E>(read: StreamingRead<E>): AsyncGenerator<E> {
  let finished = false;
  try {
    for await (const item of read) yield item;
    finished = true;
  } finally {
    if (!finished) await read.cancel().catch(() => undefined);
  }
}

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return BigInt(expected);
  }
}

function isSystem(event: EsdbRecordedEvent): boolean {
  return event.streamId.startsWith('$') || event.type.startsWith('$');
}

/** Commit positions at or above 2^63 are the server's "unknown" marker (e.g. events written in old explicit transactions). */
const UNKNOWN_POSITION = 1n << 63n;

function toRecordedEvent(event: EsdbRecordedEvent, commitPosition: bigint | undefined): RecordedEvent {
  const commit = event.position?.commit ?? commitPosition;
  if (commit === undefined || commit >= UNKNOWN_POSITION) {
    throw new Error(`EventStoreDB returned no $all position for ${event.streamId}@${event.revision}; server 22.6 or newer is required`);
  }
  return {
    stream: event.streamId,
    revision: Number(event.revision),
    position: Number(commit),
    type: event.type,
    data: event.data,
    metadata: (event.metadata ?? {}) as EventMetadata,
  };
}
