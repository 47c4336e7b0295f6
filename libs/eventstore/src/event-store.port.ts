import type { DomainEvent } from '@crs/domain/domain-event';

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

/**
 * What every event in the log has: a type and JSON data. The port is typed by a union of such events, discriminated by
 * `type`: the domain's (DomainEvent) unless a caller names another (the adapters' contract suite appends its own).
 */
export interface EventShape {
  type: string;
  data: unknown;
}

/** An event to append: one of the union's members with its metadata (still a union, so `event.type` narrows it). */
export type NewEvent<E extends EventShape = DomainEvent> = E & { metadata: EventMetadata };

/** An event read from the log: a member of the union with its metadata and place in the log. */
export type RecordedEvent<E extends EventShape = DomainEvent> = NewEvent<E> & {
  stream: string;
  /** 0-based revision inside its stream. */
  revision: number;
  /** Global, strictly increasing position in the whole log (gaps allowed). */
  position: number;
};

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

/** A checkpoint marker: no stream (''), revision -1, data null; its position says every event up to it was seen. */
export type CheckpointMarker = RecordedEvent<{ type: typeof CHECKPOINT_EVENT; data: null }>;

/**
 * The one point where an event read from storage gets its type: the adapters store JSON and give each row they read
 * to this function. What the log holds was appended through this port, so its type and data are one of the union's
 * members (an event type the code no longer declares would still come through: consumers switch on `type` and
 * ignore what they do not handle).
 */
export function fromStorage<E extends EventShape>(row: { stream: string; revision: number; position: number; type: string; data: unknown; metadata: EventMetadata }): RecordedEvent<E> {
  return row as RecordedEvent<E>;
}

/** One stream's part of a multi-stream append. */
export interface AppendRequest<E extends EventShape = DomainEvent> {
  stream: string;
  events: NewEvent<E>[];
  expectedRevision?: ExpectedRevision;
}

/** The log's events in order, with checkpoint markers when the subscription was filtered by type. */
export interface Subscription<E extends EventShape = DomainEvent> extends AsyncIterable<RecordedEvent<E> | CheckpointMarker> {
  close(): Promise<void>;
}

export interface EventStore<E extends EventShape = DomainEvent> {
  append(stream: string, events: NewEvent<E>[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult>;
  /**
   * Appends to several streams, each with its own expected revision and the same idempotency as `append`, all or
   * nothing: a conflict on any request writes none of them. Results are in request order; a stream named again
   * builds on its earlier requests. Postgres: one transaction, one round trip. EventStoreDB: one server
   * transaction (KurrentDB's multi-stream append; an older server refuses, see the adapter).
   * A conflict throws WrongExpectedRevisionError for the first stream that conflicts.
   */
  appendMany(requests: AppendRequest<E>[]): Promise<AppendResult[]>;
  /** Returns [] when the stream does not exist (or was deleted). */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent<E>[]>;
  /** Whole streams at once (one round trip on Postgres); a missing stream maps to []. */
  readStreams(streams: string[]): Promise<Map<string, RecordedEvent<E>[]>>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent<E>[]>;
  /**
   * Optional: a page of the events of `types` after `after` (at most `maxCount`, in order), and how far the log was
   * scanned: the last event returned when the page is full, else the head, every position up to which is visible.
   * Replays (rebuild, verify) use it to read only what a projection handles; without it they read everything.
   */
  readAllOfTypes?(after: number, types: readonly E['type'][], maxCount: number): Promise<{ events: RecordedEvent<E>[]; scannedTo: number }>;
  /**
   * Catch-up subscription to the whole log: events strictly after `after`, then live ones, in order, until closed.
   * With `types`, the adapter may leave out events of other types (an optimisation, not a guarantee: consumers still
   * filter) and then delivers checkpoint markers (type CHECKPOINT_EVENT, no stream, data null) whose position says
   * every event up to it has been seen, so a consumer can move its checkpoint past what was left out.
   */
  subscribeToAll(options?: { after?: number; types?: readonly E['type'][] }): Subscription<E>;
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
