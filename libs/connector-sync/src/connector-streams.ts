import { decideConnector, evolveConnector, initialConnector, type ConnectorCommand, type ConnectorState } from '@crs/domain/connectors/connector.decider';
import { CONNECTOR_STREAM_EVENT_TYPES, RESOURCE_EVENT_TYPES, type ConnectorStreamEvent, type ResourceEvent } from '@crs/domain/connectors/connector.events';
import { decideResource, evolveResource, initialResource, type ResourceCommand, type ResourceState } from '@crs/domain/connectors/resource.decider';
import { isEventOf } from '@crs/domain/domain-event';
import { DomainError } from '@crs/domain/errors';
import { streams } from '@crs/domain/streams';
import { handleCommand, handleMany, type CommandContext, type Fold, type StreamStateCache } from '@crs/eventstore/command-handling';
import type { EventStore } from '@crs/eventstore/event-store.port';

export const CONNECTOR_FOLD: Fold<ConnectorState> = { initial: initialConnector, evolve: (s, e) => (isEventOf(e, CONNECTOR_STREAM_EVENT_TYPES) ? evolveConnector(s, e) : s) };
export const RESOURCE_FOLD: Fold<ResourceState> = { initial: initialResource, evolve: (s, e) => (isEventOf(e, RESOURCE_EVENT_TYPES) ? evolveResource(s, e) : s) };

/** The connector's state, folded from its stream (the truth, where the read model may lag). */
export async function loadConnector(store: EventStore, connectorId: string): Promise<ConnectorState> {
  const history = await store.readStream(streams.connector(connectorId));
  return history.reduce(CONNECTOR_FOLD.evolve, CONNECTOR_FOLD.initial());
}

export function decideOnConnector(store: EventStore, ctx: CommandContext, command: ConnectorCommand) {
  return handleCommand<ConnectorState, ConnectorStreamEvent, ConnectorCommand>(store, streams.connector(command.connectorId), CONNECTOR_FOLD, decideConnector, command, ctx);
}

/**
 * One resource's stream as a sync sees it: the state and revision after its own appends are kept, so each report
 * (checkpoint, permissions, end) appends with the revision it last saw without reading the stream again. Anything
 * another writer appended meanwhile (a replace, a removal, a takeover) fails that append; the report is then decided
 * again on the fresh stream, where the decider refuses a sync that is no longer the running one (SYNC_NOT_CURRENT).
 */
export class ResourceStream {
  private readonly cache: StreamStateCache<ResourceState> = new Map();
  readonly name: string;

  constructor(
    private readonly store: EventStore,
    readonly connectorId: string,
    readonly resourceId: string,
  ) {
    this.name = streams.connectorResource(connectorId, resourceId);
  }

  /** The decision in flight: decisions run one at a time, so a lease renewal never races a checkpoint. */
  private queue: Promise<unknown> = Promise.resolve();

  /** Decides and appends, after any decision already in flight; throws the decider's refusal. */
  decide(ctx: CommandContext, command: ResourceCommand): Promise<ResourceEvent[]> {
    const next = this.queue.then(async () => {
      const [outcome] = await handleMany<ResourceState, ResourceEvent>(this.store, RESOURCE_FOLD, [{ stream: this.name, ctx, decide: (state) => decideResource(command, state) }], this.cache);
      if (!outcome.events) throw outcome.error;
      return outcome.events;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The state after the last decision (null before the first). */
  get state(): ResourceState | null {
    return this.cache.get(this.name)?.state ?? null;
  }
}

export const isDomainError = (err: unknown, ...codes: string[]): err is DomainError => err instanceof DomainError && (codes.length === 0 || codes.includes(err.code));
