import {
  ANY,
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  START,
  STREAM_STATE,
  AppendConsistencyViolationError,
  StreamDeletedError,
  StreamNotFoundError,
  UnsupportedError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamSubscription,
  type AppendStreamState,
  type JSONType,
  type Position,
  type ReadPosition,
  type RecordedEvent as KurrentRecordedEvent,
} from '@kurrent/kurrentdb-client';
import type { DomainEvent } from '@crs/domain/domain-event';
import {
  WrongExpectedRevisionError,
  fromStorage,
  type AppendRequest,
  type AppendResult,
  type CheckpointMarker,
  type EventMetadata,
  type EventShape,
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
 * EventStoreDB / KurrentDB event log (production), through the KurrentDB client. Global position = the event's
 * `$all` commit position as a JS number (exact below 2^53 bytes of log); `after` is exclusive everywhere.
 *
 * `appendMany` is one server transaction (KurrentDB's multi-stream append, 25.1+, or its records append with
 * consistency checks, 26.1+; see `appendMany`): all requests are written or none is. An older server refuses it with
 * an error; it is never emulated by appending one stream after another, which would leave the earlier streams
 * written when a later one conflicts.
 *
 * Deletion is a soft delete (`deleteStream`, not `tombstoneStream`): reads of the stream see no
 * stream at once and the stream can be re-created later (its revisions then continue after the old
 * last one). The server keeps the old events in `$all` until a scavenge removes them, so this adapter
 * hides them itself: an event is shown only when its revision is at or above the stream's truncate-
 * before (`$tb`) marker, which a soft delete sets. The bytes leave the server's disk only when a scavenge rewrites
 * their chunk, once that chunk is complete (docs/production-adapters.md, "Deletion and scavenging").
 *
 * `E`: the events it holds (the domain's; the contract suite's own for its tests).
 */
export class EventStoreDbEventStore<E extends EventShape = DomainEvent> implements EventStore<E> {
  private readonly client: KurrentDBClient;
  private readonly ownsClient: boolean;
  private readonly subscriptions = new Set<EventStoreDbSubscription<E>>();

  /** A connection string (`kurrentdb://host:2113?tls=false`) makes a client this store owns; a client passed in stays the caller's. */
  constructor(
    clientOrConnectionString: KurrentDBClient | string,
    private readonly options: EventStoreDbEventStoreOptions = {},
  ) {
    if (typeof clientOrConnectionString === 'string') {
      this.client = KurrentDBClient.connectionString(clientOrConnectionString);
      this.ownsClient = true;
    } else {
      this.client = clientOrConnectionString;
      this.ownsClient = false;
    }
  }

  async append(stream: string, events: NewEvent<E>[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    const expected = options.expectedRevision ?? 'any';
    if (events.length === 0) return this.checkOnly(stream, expected);
    try {
      const result = await this.client.appendToStream(
        stream,
        events.map((e) => toEventData(e)),
        { streamState: toStreamState(expected) },
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
        return this.onConflict(stream, events, expected, typeof err.actualState === 'bigint' ? Number(err.actualState) : undefined);
      }
      throw err;
    }
  }

  /**
   * The server already treats retries with an exact / no_stream expectation as idempotent; this
   * catches the rest (e.g. a retry after the stream moved on), as the Postgres adapter does.
   */
  private async onConflict(stream: string, events: NewEvent<E>[], expected: ExpectedRevision, actual: number | undefined): Promise<AppendResult> {
    const existing = await this.findAppended(stream, events.map((e) => e.metadata.eventId));
    if (existing) return existing;
    if (actual === undefined) {
      const [last] = await this.readStream(stream, { direction: 'backwards', maxCount: 1 });
      actual = last?.revision;
    }
    throw new WrongExpectedRevisionError(stream, expected, actual ?? 'no_stream');
  }

  /**
   * One server transaction for the whole batch: every request is written, or none is.
   * - Each stream named once, each request with events (what `handleMany` sends): the multi-stream append
   *   (KurrentDB 25.1+), each request with its own expectation, checked by the server inside the write.
   * - A stream named more than once, or a request with no events (a check only): the records append with
   *   consistency checks (KurrentDB 26.1+), which keeps the records in request order and checks expectations
   *   inside the write. A stream's later parts are checked here against the revision its earlier parts leave (a
   *   stale one throws and writes nothing); where that revision depends on the stream's current one, it is read
   *   and the server's check pinned to it, so a concurrent writer in between fails the write.
   * - A conflict may be the retry of an earlier append: requests whose events are already in their stream answer
   *   as they did then and the rest are written again (the same idempotency as `append`).
   * An older server refuses with an error naming the version it needs; the requests are never appended one by
   * one. Each result's position is read back per stream (the server answers with the transaction's position).
   * Metadata must hold strings only: the server keeps it as string properties (our metadata does).
   */
  async appendMany(requests: AppendRequest<E>[]): Promise<AppendResult[]> {
    const results: AppendResult[] = new Array(requests.length);
    let pending = requests.map((r, index) => ({ stream: r.stream, events: r.events, expected: r.expectedRevision ?? 'any', index }));
    for (let attempt = 0; pending.length; attempt++) {
      try {
        await this.writeBatch(pending, results);
        break;
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError) || attempt >= 3) throw err;
        const earlier = await Promise.all(pending.map((r) => (r.events.length ? this.findAppended(r.stream, r.events.map((e) => e.metadata.eventId)) : undefined)));
        const rest = pending.filter((r, k) => {
          if (earlier[k]) results[r.index] = earlier[k];
          return !earlier[k];
        });
        if (rest.length === pending.length) throw err;
        pending = rest;
      }
    }
    return results;
  }

  private async writeBatch(parts: BatchPart[], results: AppendResult[]): Promise<void> {
    const oncePerStream = new Set(parts.map((p) => p.stream)).size === parts.length && parts.every((p) => p.events.length);
    const revisions = oncePerStream ? await this.multiStreamAppend(parts) : await this.appendRecords(parts);
    const positions = await Promise.all(parts.map((p, k) => (revisions[k] < 0 ? 0 : this.positionOf(p.stream, revisions[k]))));
    parts.forEach((p, k) => (results[p.index] = { nextRevision: revisions[k], position: positions[k] }));
  }

  /** Each stream once, with events: the server's multi-stream append. Returns each part's revision after it. */
  private async multiStreamAppend(parts: BatchPart[]): Promise<number[]> {
    const requests = parts.map((p) => ({ streamName: p.stream, expectedState: toStreamState(p.expected), events: p.events.map((e) => toEventData(e, true)) }));
    const answer = await this.client.multiStreamAppend(requests).catch((err: unknown) => {
      throw asPortError(err);
    });
    const written = new Map(answer.responses.map((r) => [r.streamName, Number(r.revision)]));
    return parts.map((p) => {
      const revision = written.get(p.stream);
      if (revision === undefined) throw new Error(`EventStoreDB: the multi-stream append did not answer for ${p.stream}`);
      return revision;
    });
  }

  /** Records in request order with one consistency check per stream. Returns each part's revision after it. */
  private async appendRecords(parts: BatchPart[]): Promise<number[]> {
    const byStream = new Map<string, BatchPart[]>();
    for (const part of parts) byStream.set(part.stream, [...(byStream.get(part.stream) ?? []), part]);
    const checks: Array<{ type: typeof STREAM_STATE; streamName: string; expectedState: AppendStreamState }> = [];
    // Each part's revision after it, counted from the revision before the stream's first part when that is known.
    const base = new Map<string, number>();
    for (const [stream, group] of byStream) {
      let first = group[0].expected;
      let before = typeof first === 'number' ? first : first === 'no_stream' ? -1 : undefined;
      if (before === undefined && (group.length > 1 || !group[0].events.length)) {
        const current = await this.currentRevision(stream);
        if (!satisfies(first, current)) throw new WrongExpectedRevisionError(stream, first, current < 0 ? 'no_stream' : current);
        first = current < 0 ? 'no_stream' : current;
        before = current;
      }
      if (first !== 'any') checks.push({ type: STREAM_STATE, streamName: stream, expectedState: toStreamState(first) });
      if (before === undefined) continue;
      base.set(stream, before);
      let revision = before;
      for (const part of group) {
        if (!satisfies(part.expected, revision)) {
          // Stale against the parts before it; name the first part instead when the stream itself has moved on.
          const current = await this.currentRevision(stream);
          if (!satisfies(group[0].expected, current)) throw new WrongExpectedRevisionError(stream, group[0].expected, current < 0 ? 'no_stream' : current);
          throw new WrongExpectedRevisionError(stream, part.expected, revision < 0 ? 'no_stream' : revision);
        }
        revision += part.events.length;
      }
    }
    const records = parts.flatMap((p) => p.events.map((e) => ({ streamName: p.stream, record: toEventData(e, true) })));
    const answer = await this.client.appendRecords(records, checks).catch((err: unknown) => {
      throw asPortError(err);
    });
    const written = new Map(answer.responses.map((r) => [r.streamName, Number(r.revision)]));
    const seen = new Map<string, number>();
    return parts.map((p) => {
      const start = base.get(p.stream);
      const total = byStream.get(p.stream)!.reduce((n, q) => n + q.events.length, 0);
      const last = written.get(p.stream) ?? start;
      if (last === undefined) throw new Error(`EventStoreDB: the records append did not answer for ${p.stream}`);
      const upTo = (seen.get(p.stream) ?? 0) + p.events.length;
      seen.set(p.stream, upTo);
      return last - total + upTo;
    });
  }

  /** The stream's last revision, -1 when it has none (or was deleted). */
  private async currentRevision(stream: string): Promise<number> {
    const [last] = await this.readStream(stream, { direction: 'backwards', maxCount: 1 });
    return last ? last.revision : -1;
  }

  async readStreams(streams: string[]): Promise<Map<string, RecordedEvent<E>[]>> {
    const unique = [...new Set(streams)];
    const read = await Promise.all(unique.map((s) => this.readStream(s)));
    return new Map(unique.map((s, i) => [s, read[i]]));
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent<E>[]> {
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    const backwards = options.direction === 'backwards';
    const out: RecordedEvent<E>[] = [];
    try {
      const read = this.client.readStream(stream, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: options.fromRevision !== undefined ? BigInt(options.fromRevision) : backwards ? END : START,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) {
        if (resolved.event) out.push(toRecordedEvent<E>(resolved.event, resolved.commitPosition));
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError || err instanceof StreamDeletedError) return [];
      throw err;
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent<E>[]> {
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    const out: RecordedEvent<E>[] = [];
    if (max <= 0) return out;
    for await (const event of this.scanAll('forwards', options.after ?? 0)) {
      out.push(event);
      if (out.length >= max) break;
    }
    return out;
  }

  /** `types` is not applied here (allowed by the port): every event is delivered, and no checkpoint markers are needed. */
  subscribeToAll(options: { after?: number; types?: readonly E['type'][] } = {}): Subscription<E> {
    const subscription = new EventStoreDbSubscription<E>(this, this.client, options.after ?? 0, this.options.deletionCacheMs ?? 1000, (s) =>
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
  async isVisible(event: KurrentRecordedEvent, cache: Map<string, [number, number]>, maxAgeMs = Number.POSITIVE_INFINITY): Promise<boolean> {
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
  private async *scanAll(direction: 'forwards' | 'backwards', from: number): AsyncGenerator<RecordedEvent<E>> {
    const forwards = direction === 'forwards';
    const cache = new Map<string, [number, number]>();
    let cursor: ReadPosition = from > 0 ? { commit: BigInt(from), prepare: BigInt(from) } : forwards ? START : END;
    let bound = from;
    for (;;) {
      let seen = 0;
      let last: Position | undefined;
      const read = this.client.readAll({ fromPosition: cursor, direction: forwards ? FORWARDS : BACKWARDS, maxCount: PAGE });
      for await (const resolved of read) {
        seen++;
        const event = resolved.event;
        if (!event) continue;
        last = event.position;
        const commit = Number(event.position.commit);
        // Reads from a position include the event at it; `after` is exclusive.
        if (bound > 0 && (forwards ? commit <= bound : commit >= bound)) continue;
        if (!(await this.isVisible(event, cache))) continue;
        yield toRecordedEvent<E>(event, resolved.commitPosition);
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

  private async readStreamRaw(stream: string): Promise<KurrentRecordedEvent[]> {
    const out: KurrentRecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(stream, { direction: BACKWARDS, fromRevision: END })) {
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
class EventStoreDbSubscription<E extends EventShape> implements Subscription<E> {
  private closed = false;
  private subscription: AllStreamSubscription | undefined;
  private iterator: AsyncGenerator<RecordedEvent<E>> | undefined;
  private readonly deletions = new Map<string, [number, number]>();

  constructor(
    private readonly store: EventStoreDbEventStore<E>,
    private readonly client: KurrentDBClient,
    private readonly after: number,
    private readonly deletionCacheMs: number,
    private readonly onClose: (s: EventStoreDbSubscription<E>) => void,
  ) {}

  /** Never a checkpoint marker: `types` is not applied, every event comes through. */
  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent<E> | CheckpointMarker> {
    this.iterator ??= this.run();
    return this.iterator;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
    await this.stop();
  }

  private async *run(): AsyncGenerator<RecordedEvent<E>> {
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
        yield toRecordedEvent<E>(event, resolved.commitPosition);
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

interface BatchPart {
  stream: string;
  events: NewEvent<EventShape>[];
  expected: ExpectedRevision;
  /** Its request's place in `appendMany`'s arguments. */
  index: number;
}

/** The client's conflict errors as the port's, and an old server's refusal as an error saying what it lacks. */
function asPortError(err: unknown): unknown {
  const revision = (state: unknown): number | 'no_stream' => (typeof state === 'bigint' && state >= 0n ? Number(state) : 'no_stream');
  if (err instanceof WrongExpectedVersionError) return new WrongExpectedRevisionError(err.streamName, fromStreamState(err.expectedState), revision(err.actualState));
  if (err instanceof AppendConsistencyViolationError && err.violations.length) {
    const [v] = err.violations;
    return new WrongExpectedRevisionError(v.streamName, fromStreamState(v.expectedState), revision(v.actualState));
  }
  if (err instanceof UnsupportedError) {
    return new Error(
      `EventStoreDB: this appendMany needs the server's ${err.feature} (KurrentDB ${err.minimumVersion} or later), which this server does not offer; ` +
        'upgrade the server (appending one stream after another would leave earlier streams written when a later one conflicts)',
      { cause: err },
    );
  }
  return err;
}

/** The port's expectations are the client's stream states, revisions as bigint. */
function toStreamState(expected: ExpectedRevision): AppendStreamState {
  return typeof expected === 'number' ? BigInt(expected) : expected;
}

function fromStreamState(state: AppendStreamState): ExpectedRevision {
  return typeof state === 'bigint' ? Number(state) : state;
}

/** Whether a stream at `revision` (-1: no stream) meets the expectation. */
function satisfies(expected: ExpectedRevision, revision: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return revision < 0;
  if (expected === 'stream_exists') return revision >= 0;
  return revision === expected;
}

/**
 * The event as the client sends it, its id the event id (the server's idempotency key). The multi-stream append
 * keeps metadata as string properties: a value of another type is refused here, naming it, and an absent one left out.
 */
function toEventData(e: NewEvent<EventShape>, stringMetadata = false) {
  let metadata: Record<string, unknown> = e.metadata;
  if (stringMetadata) {
    metadata = Object.fromEntries(Object.entries(metadata).filter(([, v]) => v !== undefined));
    for (const [key, value] of Object.entries(metadata)) {
      if (typeof value !== 'string') throw new TypeError(`EventStoreDB multi-stream append: metadata.${key} of ${e.type} is a ${typeof value}, not a string`);
    }
  }
  return jsonEvent({ id: e.metadata.eventId, type: e.type, data: (e.data ?? null) as JSONType, metadata: metadata as JSONType });
}

function isSystem(event: KurrentRecordedEvent): boolean {
  return event.streamId.startsWith('$') || event.type.startsWith('$');
}

/** Commit positions at or above 2^63 are the server's "unknown" marker (e.g. events written in old explicit transactions). */
const UNKNOWN_POSITION = 1n << 63n;

/** A server event as the event it holds; its type is asserted in `fromStorage`, the port's one point for it. */
function toRecordedEvent<E extends EventShape>(event: KurrentRecordedEvent, commitPosition: bigint | undefined): RecordedEvent<E> {
  const commit = event.position?.commit ?? commitPosition;
  if (commit === undefined || commit >= UNKNOWN_POSITION) {
    throw new Error(`EventStoreDB returned no $all position for ${event.streamId}@${event.revision}; server 22.6 or newer is required`);
  }
  return fromStorage<E>({
    stream: event.streamId,
    revision: Number(event.revision),
    position: Number(commit),
    type: event.type,
    data: event.data,
    metadata: withoutSchemaProperties(event.metadata),
  });
}

/** Events written by the multi-stream append carry the server's `$schema.*` properties in their metadata; ours start with no `$`. */
function withoutSchemaProperties(metadata: unknown): EventMetadata {
  const entries = Object.entries((metadata ?? {}) as Record<string, unknown>).filter(([key]) => !key.startsWith('$schema.'));
  return Object.fromEntries(entries) as EventMetadata;
}
