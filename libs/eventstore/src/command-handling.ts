import { randomUUID } from 'node:crypto';
import { WrongExpectedRevisionError, type EventMetadata, type EventStore } from './event-store.port';

export interface DecidedEvent {
  type: string;
  data: unknown;
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
 */
export async function handleCommand<S, E extends DecidedEvent, C>(
  store: EventStore,
  stream: string,
  fold: { initial: () => S; evolve: (state: S, event: E) => S },
  decide: (command: C, state: S) => E[],
  command: C,
  ctx: CommandContext,
): Promise<CommandOutcome<E>> {
  for (let attempt = 0; ; attempt++) {
    const history = await store.readStream(stream);
    const state = history.reduce((s, e) => fold.evolve(s, e as unknown as E), fold.initial());
    const events = decide(command, state);
    if (events.length === 0) return { events, position: null };
    const occurredAt = (ctx.now ?? new Date()).toISOString();
    const expectedRevision = history.length === 0 ? 'no_stream' : history[history.length - 1].revision;
    try {
      const result = await store.append(
        stream,
        events.map((e) => ({ type: e.type, data: e.data, metadata: metadataFor(ctx, occurredAt) })),
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
