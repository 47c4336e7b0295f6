import {
  AppendConsistencyViolationError,
  END,
  START,
  StreamNotFoundError,
  UnsupportedError,
  WrongExpectedVersionError,
  type AppendRecordInput,
  type AppendStreamRequest,
  type AppendStreamState,
  type EventData,
  type ConsistencyCheck,
  type KurrentDBClient,
} from '@kurrent/kurrentdb-client';

/**
 * An in-memory stand-in for the KurrentDB client calls `EventStoreDbEventStore` makes on writes and stream reads,
 * with the server behaviour the client documents: optimistic concurrency per stream, idempotent single-stream
 * appends by event id, the atomic multi-stream append (KurrentDB 25.1) and records append with consistency checks
 * (26.1): all or nothing, string-only metadata kept as properties next to the server's `$schema.*` ones, no
 * duplicate check by event id; a soft delete through the truncate-before marker.
 *
 * It checks the adapter's own logic (how it merges, checks, retries and answers) where no server runs. It is not
 * the server: only the contract suite against a real one (`npm run test:production-adapters`) proves the adapter.
 */
export class KurrentClientModel {
  /** Every event in log order; its index + 1 is its commit position. */
  private readonly log: StoredEvent[] = [];
  private readonly truncateBefore = new Map<string, number>();
  /** The server version this stands in for: 25.1 refuses the records append, 24.10 both multi-stream writes. */
  serverVersion: '24.10' | '25.1' | '26.1' = '26.1';
  readonly calls: string[] = [];

  asClient(): KurrentDBClient {
    return this as unknown as KurrentDBClient;
  }

  async appendToStream(streamName: string, events: EventData[], options: { streamState?: AppendStreamState } = {}) {
    this.calls.push(`appendToStream ${streamName}`);
    const state = options.streamState ?? 'any';
    const stream = this.visible(streamName);
    // The server's idempotency: the same events already written where this expectation puts them.
    const at = stream.findIndex((e) => e.id === events[0].id);
    if (at >= 0 && events.every((e, k) => stream[at + k]?.id === e.id)) {
      const before = at === 0 ? -1 : Number(stream[at - 1].revision);
      if (state === 'any' || state === 'stream_exists' || (state === 'no_stream' && before === -1) || (typeof state === 'bigint' && Number(state) === before)) {
        return { success: true, nextExpectedRevision: stream[at + events.length - 1].revision };
      }
    }
    this.check(streamName, state);
    const written = this.write(streamName, events, false);
    const last = written[written.length - 1];
    return { success: true, nextExpectedRevision: last.revision, position: { commit: last.commit, prepare: last.commit } };
  }

  async multiStreamAppend(requests: AppendStreamRequest[]) {
    this.calls.push(`multiStreamAppend ${requests.map((r) => r.streamName).join(',')}`);
    if (this.serverVersion === '24.10') throw new UnsupportedError('multiStreamAppend', '25.1');
    for (const r of requests) stringMetadataOnly('multiStreamAppend', r.events);
    if (new Set(requests.map((r) => r.streamName)).size !== requests.length) throw new Error('model: a stream named twice in one multi-stream append');
    for (const r of requests) this.check(r.streamName, r.expectedState);
    const responses = requests.map((r) => {
      const written = this.write(r.streamName, r.events, true);
      return { streamName: r.streamName, revision: written[written.length - 1].revision };
    });
    return { position: BigInt(this.log.length), responses };
  }

  async appendRecords(records: AppendRecordInput[], checks: ConsistencyCheck[] = []) {
    this.calls.push(`appendRecords ${records.map((r) => r.streamName).join(',')} checks ${checks.map((c) => `${c.streamName}@${String(c.expectedState)}`).join(',')}`);
    if (this.serverVersion !== '26.1') throw new UnsupportedError('appendRecords', '26.1');
    stringMetadataOnly('appendRecords', records.map((r) => r.record));
    const violations = checks.flatMap((c, checkIndex) => {
      try {
        this.check(c.streamName, c.expectedState);
        return [];
      } catch (err) {
        const actual = (err as WrongExpectedVersionError).actualState;
        return [{ checkIndex, streamState: { stream: c.streamName, expectedState: wire(c.expectedState), actualState: actual === 'no_stream' ? '-1' : String(actual) } }];
      }
    });
    if (violations.length) throw new AppendConsistencyViolationError(undefined as never, { violationsList: violations } as never);
    const last = new Map<string, bigint>();
    for (const r of records) last.set(r.streamName, this.write(r.streamName, [r.record], true)[0].revision);
    return { position: BigInt(this.log.length), responses: [...last].map(([streamName, revision]) => ({ streamName, revision })) };
  }

  async *readStream(streamName: string, options: { direction?: string; fromRevision?: bigint | typeof START | typeof END; maxCount?: number | bigint } = {}) {
    const stream = this.visible(streamName);
    if (!stream.length) throw new StreamNotFoundError(undefined, streamName);
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision;
    let events = backwards ? [...stream].reverse() : stream;
    if (typeof from === 'bigint') events = events.filter((e) => (backwards ? e.revision <= from : e.revision >= from));
    for (const e of events.slice(0, Number(options.maxCount ?? Number.MAX_SAFE_INTEGER))) yield { event: recorded(e) };
  }

  async getStreamMetadata(streamName: string) {
    const tb = this.truncateBefore.get(streamName);
    return { streamName, metadata: tb === undefined ? undefined : { truncateBefore: tb } };
  }

  async deleteStream(streamName: string) {
    const stream = this.visible(streamName);
    if (!stream.length) throw new WrongExpectedVersionError(undefined, { streamName, expected: 'any', current: 'no_stream' });
    this.truncateBefore.set(streamName, Number(stream[stream.length - 1].revision) + 1);
    return {};
  }

  async dispose(): Promise<void> {}

  /** Events of a stream a read shows: at or above its truncate-before marker. */
  private visible(streamName: string): StoredEvent[] {
    const tb = this.truncateBefore.get(streamName) ?? 0;
    return this.log.filter((e) => e.streamId === streamName && Number(e.revision) >= tb);
  }

  private lastRevision(streamName: string): number {
    const all = this.log.filter((e) => e.streamId === streamName);
    return all.length ? Number(all[all.length - 1].revision) : -1;
  }

  private check(streamName: string, state: AppendStreamState): void {
    const visible = this.visible(streamName);
    const current = visible.length ? Number(visible[visible.length - 1].revision) : -1;
    const ok = state === 'any' || (state === 'no_stream' && current < 0) || (state === 'stream_exists' && current >= 0) || (typeof state === 'bigint' && Number(state) === current);
    if (!ok) throw new WrongExpectedVersionError(undefined, { streamName, expected: state, current: current < 0 ? 'no_stream' : BigInt(current) });
  }

  private write(streamName: string, events: EventData[], asProperties: boolean): StoredEvent[] {
    let revision = this.lastRevision(streamName);
    return events.map((e) => {
      const metadata = asProperties ? { ...(e.metadata as Record<string, string>), '$schema.format': 'Json', '$schema.name': e.type } : e.metadata;
      const stored: StoredEvent = { streamId: streamName, id: e.id, revision: BigInt(++revision), type: e.type, data: e.data, metadata, commit: BigInt(this.log.length + 1) };
      this.log.push(stored);
      return stored;
    });
  }
}

function stringMetadataOnly(call: string, events: EventData[]): void {
  for (const e of events) {
    const metadata = e.metadata as Record<string, unknown> | undefined;
    if (metadata && Object.values(metadata).some((v) => typeof v !== 'string')) {
      throw new Error(`${call} requires metadata to be a plain object with string keys and string values.`);
    }
  }
}

/** A stream state as the protocol writes it. */
function wire(state: AppendStreamState): string {
  return state === 'no_stream' ? '-1' : state === 'any' ? '-2' : state === 'stream_exists' ? '-4' : String(state);
}

interface StoredEvent {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  data: unknown;
  metadata: unknown;
  commit: bigint;
}

function recorded(e: StoredEvent) {
  return {
    streamId: e.streamId,
    id: e.id,
    revision: e.revision,
    type: e.type,
    isJson: true,
    created: new Date(0),
    data: structuredClone(e.data),
    metadata: structuredClone(e.metadata),
    position: { commit: e.commit, prepare: e.commit },
  };
}
