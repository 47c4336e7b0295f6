/**
 * The event log port. Two adapters: Postgres (embedded default) and EventStoreDB / KurrentDB (production).
 * One contract suite is written for both (test/integration/event-store.contract.ts). The Postgres adapter passes it
 * in every `npm test`; the EventStoreDB adapter's run needs a server (`npm run test:production-adapters`) and is
 * recorded in docs/spec-coverage.md, which says whether it has been made.
 */

/** Who did what, when, in which scope. Every event carries it. */
export interface EventMetadata {
  /** Unique event id (UUID). Appending the same id again to the same stream is a no-op (idempotent retry). */
  eventId: string;
  /** RFC 3339 time the command was decided; projections read time from here, never from the clock. */
  occurredAt: string;
  orgId: string;
  /** Database id (not name) when the event belongs to one. */
  databaseId?: string;
  requestId?: string;
  /** `key:<prefix>` for API calls, `cli`, `system:<component>` for the worker. */
  actor: string;
  [extra: string]: unknown;
}

export interface NewEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
  metadata: EventMetadata;
}

export interface RecordedEvent<T extends string = string, D = any> extends NewEvent<T, D> {
  stream: string;
  /** 0-based revision inside its stream. */
  revision: number;
  /** Global, strictly increasing position in the whole log (gaps allowed). */
  position: number;
}

/** `any`: no check. `no_stream`: the stream must not exist. `stream_exists`: it must. A number: its last revision. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

export interface AppendResult {
  /** Revision of the last event now in the stream. */
  nextRevision: number;
  /** Global position of the last appended event. */
  position: number;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive start revision (forwards: lowest, backwards: highest). Default: the stream's start or end. */
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. Default: from the start (0). */
  after?: number;
  maxCount?: number;
}

/** Type of the checkpoint markers a type-filtered subscription delivers (never appended; not a domain event). */
export const CHECKPOINT_EVENT = '$checkpoint';

/** One stream's part of a multi-stream append. */
export interface AppendRequest {
  stream: string;
  events: NewEvent[];
  expectedRevision?: ExpectedRevision;
}

export interface Subscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

export interface EventStore {
  append(stream: string, events: NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult>;
  /**
   * Appends to several streams, each with its own expected revision and the same idempotency as `append`, all or
   * nothing: a conflict on any request writes none of them. Results are in request order; a stream named again
   * builds on its earlier requests. Postgres: one transaction, one round trip. EventStoreDB: one server
   * transaction (KurrentDB's multi-stream append; an older server refuses, see the adapter).
   * A conflict throws WrongExpectedRevisionError for the first stream that conflicts.
   */
  appendMany(requests: AppendRequest[]): Promise<AppendResult[]>;
  /** Returns [] when the stream does not exist (or was deleted). */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Whole streams at once (one round trip on Postgres); a missing stream maps to []. */
  readStreams(streams: string[]): Promise<Map<string, RecordedEvent[]>>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * Optional: a page of the events of `types` after `after` (at most `maxCount`, in order), and how far the log was
   * scanned: the last event returned when the page is full, else the head, every position up to which is visible.
   * Replays (rebuild, verify) use it to read only what a projection handles; without it they read everything.
   */
  readAllOfTypes?(after: number, types: readonly string[], maxCount: number): Promise<{ events: RecordedEvent[]; scannedTo: number }>;
  /**
   * Catch-up subscription to the whole log: events strictly after `after`, then live ones, in order, until closed.
   * With `types`, the adapter may leave out events of other types (an optimisation, not a guarantee: consumers still
   * filter) and then delivers checkpoint markers (type CHECKPOINT_EVENT, no stream, data null) whose position says
   * every event up to it has been seen, so a consumer can move its checkpoint past what was left out.
   */
  subscribeToAll(options?: { after?: number; types?: readonly string[] }): Subscription;
  /** Removes the stream's events from the log (content gone; later reads see no stream). */
  deleteStream(stream: string): Promise<void>;
  /** Position of the newest event in the log (0 when empty). */
  headPosition(): Promise<number>;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  readonly code = 'WRONG_EXPECTED_REVISION';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`);
  }
}

/** Stream names come from one place. Ids are validated upstream; `-` separates category from id. */
export function streamName(category: string, ...ids: string[]): string {
  return [category, ...ids].join('-');
}
