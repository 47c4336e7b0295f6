import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@crs/config';
import { decideConnector, evolveConnector, initialConnector, requireLiveConnector, type ConnectorCommand, type ConnectorState } from '@crs/domain/connectors/connector.decider';
import { CONNECTOR_STREAM_EVENT_TYPES, RESOURCE_EVENT_TYPES, type ConnectorStreamEvent, type ResourceEvent } from '@crs/domain/connectors/connector.events';
import { decideResource, evolveResource, initialResource, type ResourceCommand, type ResourceState } from '@crs/domain/connectors/resource.decider';
import type { DomainEvent } from '@crs/domain/domain-event';
import { streams } from '@crs/domain/streams';
import { handleCommand, metadataFor, type CommandContext } from '@crs/eventstore/command-handling';
import { WrongExpectedRevisionError, type EventStore, type RecordedEvent } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { APP_CONFIG, EVENT_STORE, PROJECTION_RUNNER } from '@crs/platform/tokens';

const isConnectorStreamEvent = (e: DomainEvent): e is ConnectorStreamEvent => (CONNECTOR_STREAM_EVENT_TYPES as readonly string[]).includes(e.type);
const isResourceEvent = (e: DomainEvent): e is ResourceEvent => (RESOURCE_EVENT_TYPES as readonly string[]).includes(e.type);

export const foldConnector = (events: readonly DomainEvent[]): ConnectorState => events.filter(isConnectorStreamEvent).reduce(evolveConnector, initialConnector());
export const foldResource = (events: readonly DomainEvent[]): ResourceState => events.filter(isResourceEvent).reduce(evolveResource, initialResource());

/**
 * Decisions on a connector's streams (docs/connectors.md, "Model"): the connector stream through `handleCommand`, and
 * the resource streams in one multi-stream append (all of a request's resources or none) that also expects the
 * connector stream's revision, so a delete or pause that lands between the check and the append fails it and the
 * decision is taken again on what the streams hold then. Each waits until the `connectors` read model shows what it
 * appended, so the next read sees it.
 */
@Injectable()
export class ConnectorStreams {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Decides the commands in order on the connector stream (each on the state the earlier ones left) and appends what
   * they decide as one append; returns the events and the state after them.
   */
  async decideConnector(ctx: CommandContext, connectorId: string, commands: ConnectorCommand[]): Promise<{ events: ConnectorStreamEvent[]; state: ConnectorState }> {
    let before = initialConnector();
    const out = await handleCommand<ConnectorState, ConnectorStreamEvent, ConnectorCommand[]>(
      this.store,
      streams.connector(connectorId),
      { initial: initialConnector, evolve: (s, e) => (isConnectorStreamEvent(e) ? evolveConnector(s, e) : s) },
      (cs, state) => {
        before = state;
        const events: ConnectorStreamEvent[] = [];
        let current = state;
        for (const c of cs) {
          const decided = decideConnector(c, current);
          current = decided.reduce(evolveConnector, current);
          events.push(...decided);
        }
        return events;
      },
      commands,
      ctx,
    );
    await this.waitFor(out.position);
    return { events: out.events, state: out.events.reduce(evolveConnector, before) };
  }

  /**
   * Decides one command on each resource stream, after checking the connector is live, and appends every decided
   * event in one multi-stream append with the connector stream's revision expected. A refusal of any command refuses
   * the request: nothing is appended. Returns each command's events and its resource's state after them, in order.
   */
  async decideResources(ctx: CommandContext, connectorId: string, commands: ResourceCommand[]): Promise<{ events: ResourceEvent[]; state: ResourceState }[]> {
    const connectorStream = streams.connector(connectorId);
    const names = commands.map((c) => streams.connectorResource(connectorId, c.resourceId));
    for (let attempt = 0; ; attempt++) {
      const histories = await this.store.readStreams([connectorStream, ...names]);
      const connectorHistory = histories.get(connectorStream) ?? [];
      requireLiveConnector(foldConnector(connectorHistory), connectorId);
      const occurredAt = (ctx.now ?? new Date()).toISOString();
      const results = commands.map((command, i) => {
        const history = histories.get(names[i]) ?? [];
        const state = foldResource(history);
        const events = decideResource(command, state);
        return { events, state: events.reduce(evolveResource, state), revision: lastRevision(history) };
      });
      const writes = results.map((r, i) => ({ r, stream: names[i] })).filter(({ r }) => r.events.length > 0);
      if (writes.length === 0) return results.map(({ events, state }) => ({ events, state }));
      try {
        const appended = await this.store.appendMany([
          { stream: connectorStream, events: [], expectedRevision: lastRevision(connectorHistory) },
          ...writes.map(({ r, stream }) => ({ stream, events: r.events.map((e) => ({ ...e, metadata: metadataFor(ctx, occurredAt) })), expectedRevision: r.revision })),
        ]);
        await this.waitFor(Math.max(...appended.map((a) => a.position)));
        return results.map(({ events, state }) => ({ events, state }));
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError && attempt < 4) continue;
        throw err;
      }
    }
  }

  /** The connector's state as its stream holds it now. */
  async connectorState(connectorId: string): Promise<ConnectorState> {
    return foldConnector(await this.store.readStream(streams.connector(connectorId)));
  }

  private async waitFor(position: number | null): Promise<void> {
    if (position !== null) await this.runner.waitFor(position, ['connectors'], this.config.projectionWaitMs);
  }
}

const lastRevision = (history: readonly RecordedEvent[]) => (history.length === 0 ? ('no_stream' as const) : history[history.length - 1].revision);
