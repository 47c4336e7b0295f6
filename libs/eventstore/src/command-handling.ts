import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '@crs/domain/domain-event';
import { WrongExpectedRevisionError, type EventMetadata, type EventShape, type EventStore, type ExpectedRevision, type NewEvent, type RecordedEvent } from './event-store.port';

/**
 * How a stream folds into state. `evolve` takes any event of the log (`L`, the domain's) and switches on its type:
 * a stream holds only its own family's events, and the fold ignores the rest.
 */
export interface Fold<S, L extends EventShape = DomainEvent> {
  initial: () => S;
  evolve: (state: S, event: L) => S;
}

export interface CommandContext {
  orgId: string;
  actor: string;
  requestId?: string;
  databaseId?: string;
  now?: Date;
}

export interface CommandOutcome<E> {
  events: E[];
  /** Global position of the last appended event; null when the decision produced no event. */
  position: number | null;
}

/**
 * Load a stream, fold it into state, decide, append with the expected revision. A concurrent writer makes
 * the append fail with WrongExpectedRevisionError; deciding again on fresh state is safe, so we retry a few times.
 * `E`: the events the decider produces, members of the log's union `L`.
 */
export async function handleCommand<S, E extends L, C, L extends EventShape = DomainEvent>(
  store: EventStore<L>,
  stream: string,
  fold: Fold<S, L>,
  decide: (command: C, state: S) => E[],
  command: C,
  ctx: CommandContext,
): Promise<CommandOutcome<E>> {
  for (let attempt = 0; ; attempt++) {
    const history = await store.readStream(stream);
    const state = history.reduce((s, e) => fold.evolve(s, e), fold.initial());
    const events = decide(command, state);
    if (events.length === 0) return { events, position: null };
    const occurredAt = (ctx.now ?? new Date()).toISOString();
    const expectedRevision = history.length === 0 ? 'no_stream' : history[history.length - 1].revision;
    try {
      const result = await store.append(
        stream,
        events.map((e) => withMetadata(e, metadataFor(ctx, occurredAt))),
        { expectedRevision },
      );
      return { events, position: result.position };
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError && attempt < 4) continue;
      throw err;
    }
  }
}

export function metadataFor(ctx: CommandContext, occurredAt = (ctx.now ?? new Date()).toISOString()): EventMetadata {
  const meta: EventMetadata = { eventId: randomUUID(), occurredAt, orgId: ctx.orgId, actor: ctx.actor };
  if (ctx.requestId) meta.requestId = ctx.requestId;
  if (ctx.databaseId) meta.databaseId = ctx.databaseId;
  return meta;
}

/** The decided event with its metadata, as it is appended (the store keeps its type, data and metadata). */
function withMetadata<E extends EventShape>(event: E, metadata: EventMetadata): NewEvent<E> {
  return { ...event, metadata };
}

/** One stream's decision inside a batch. `decide` may throw (a domain refusal): that entry fails on its own. */
export interface BatchEntry<S, E extends EventShape> {
  stream: string;
  decide: (state: S) => E[];
  ctx: CommandContext;
}

/**
 * What a caller already knows of some streams: their folded state and last revision (-1: no stream). `handleMany`
 * decides on it without reading those streams and keeps it current after its append. A stale entry (someone else
 * appended meanwhile) fails the append's expected-revision check; the batch is then decided again on a fresh read.
 */
export type StreamStateCache<S> = Map<string, { state: S; revision: number }>;

export type BatchOutcome<E> = { events: E[]; position: number | null; error?: undefined } | { error: unknown; events?: undefined; position?: undefined };

/**
 * `handleCommand` for many streams at once: one read of every stream, one atomic multi-stream append (one round
 * trip on Postgres). Entries on the same stream are decided in order, each on the state the earlier ones left,
 * and appended as one request. A concurrent writer fails the append; the whole batch is then decided again on
 * fresh state. Outcomes are in entry order; an entry whose decide threw carries the error and appends nothing.
 */
export async function handleMany<S, E extends L, L extends EventShape = DomainEvent>(
  store: EventStore<L>,
  fold: Fold<S, L>,
  entries: BatchEntry<S, E>[],
  cache?: StreamStateCache<S>,
): Promise<BatchOutcome<E>[]> {
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) for (const e of entries) cache?.delete(e.stream);
    const unknown = [...new Set(entries.map((e) => e.stream))].filter((s) => !cache?.has(s));
    const histories = unknown.length ? await store.readStreams(unknown) : new Map<string, RecordedEvent<L>[]>();
    const outcomes: BatchOutcome<E>[] = new Array(entries.length);
    const perStream = new Map<string, { state: S; expected: ExpectedRevision; next: number; events: NewEvent<L>[]; entries: number[] }>();
    for (const [i, entry] of entries.entries()) {
      let slot = perStream.get(entry.stream);
      if (!slot) {
        const known = cache?.get(entry.stream);
        const history = known ? [] : (histories.get(entry.stream) ?? []);
        const revision = known ? known.revision : history.length === 0 ? -1 : history[history.length - 1].revision;
        slot = {
          state: known ? known.state : history.reduce((s, e) => fold.evolve(s, e), fold.initial()),
          expected: revision < 0 ? 'no_stream' : revision,
          next: revision + 1,
          events: [],
          entries: [],
        };
        perStream.set(entry.stream, slot);
      }
      let decided: E[];
      try {
        decided = entry.decide(slot.state);
      } catch (error) {
        outcomes[i] = { error };
        continue;
      }
      const occurredAt = (entry.ctx.now ?? new Date()).toISOString();
      for (const e of decided) {
        // Folded with the revision it will get, as a recorded event would be.
        slot.state = fold.evolve(slot.state, { ...e, revision: slot.next++ });
        slot.events.push(withMetadata<L>(e, metadataFor(entry.ctx, occurredAt)));
      }
      outcomes[i] = { events: decided, position: null };
      if (decided.length) slot.entries.push(i);
    }
    const requests = [...perStream].filter(([, s]) => s.events.length).map(([stream, s]) => ({ stream, slot: s }));
    try {
      const results = await store.appendMany(requests.map((r) => ({ stream: r.stream, events: r.slot.events, expectedRevision: r.slot.expected })));
      requests.forEach((r, k) => {
        for (const i of r.slot.entries) (outcomes[i] as { position: number | null }).position = results[k].position;
        cache?.set(r.stream, { state: r.slot.state, revision: results[k].nextRevision });
      });
      if (cache) for (const [stream, slot] of perStream) if (!slot.events.length) cache.set(stream, { state: slot.state, revision: slot.next - 1 });
      return outcomes;
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError && attempt < 4) continue;
      throw err;
    }
  }
}
