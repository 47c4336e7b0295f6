import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import { handleCommand, type CommandContext } from '@crs/eventstore/command-handling';
import {
  decideDatabase,
  evolveDatabase,
  evolveRegistry,
  initialDatabase,
  initialRegistry,
  type RegistryState,
} from '@crs/domain/database.decider';
import type { EventOfType } from '@crs/domain/domain-event';
import { DATABASE_COMPONENTS, type DatabaseEvent } from '@crs/domain/events';
import { streams } from '@crs/domain/streams';
import type { Processor } from '@crs/persistence/projection';
import type { ProjectionRunner, RunnerLogger } from '@crs/persistence/projection-runner';
import type { DatabaseResources } from '@crs/persistence/database-resources';

/**
 * Provisions a new database's components (each flag turns true only after its part exists) and carries
 * out database and collection deletion: purge indexes and blobs, delete the content streams from the log,
 * then append the audit event (DatabaseDeleted / CollectionDeleted). Every step is safe to repeat.
 */
export class DatabaseLifecycleProcessor implements Processor {
  readonly kind = 'processor' as const;
  readonly name = 'database-lifecycle';
  readonly handles = ['DatabaseCreated', 'DatabaseDeletionRequested', 'CollectionDeletionRequested'] as const;

  constructor(
    private readonly store: EventStore,
    private readonly resources: DatabaseResources,
    private readonly runner: ProjectionRunner,
    private readonly log?: RunnerLogger,
  ) {}

  async handle(event: RecordedEvent): Promise<void> {
    const ctx = (databaseId: string): CommandContext => ({ orgId: event.metadata.orgId, actor: `system:${this.name}`, requestId: event.metadata.requestId, databaseId });
    switch (event.type) {
      case 'DatabaseCreated':
        return this.provision(ctx(event.data.databaseId), event);
      case 'DatabaseDeletionRequested':
        return this.deleteDatabase(ctx(event.data.databaseId), event, event.data.databaseId, event.data.name);
      case 'CollectionDeletionRequested':
        return this.deleteCollection(ctx(event.data.databaseId), event, event.data.databaseId, event.data.collection);
    }
  }

  private async provision(ctx: CommandContext, event: RecordedEvent<EventOfType<'DatabaseCreated'>>): Promise<void> {
    const { databaseId, embedder } = event.data;
    const history = await this.store.readStream(streams.database(databaseId));
    const state = history.reduce((s, h) => evolveDatabase(s, h), initialDatabase());
    const registry = await this.registryState(event.metadata.orgId);
    if (!Object.values(registry.byName).some((d) => d.databaseId === databaseId && !d.deleting)) return; // deleted meanwhile
    for (const component of DATABASE_COMPONENTS) {
      if (state.provisioned.has(component)) continue;
      const detail = await this.resources.provision(databaseId, component, embedder);
      await handleCommand(this.store, streams.database(databaseId), { initial: initialDatabase, evolve: evolveDatabase }, decideDatabase, { type: 'MarkProvisioned', databaseId, component, detail }, ctx);
    }
  }

  private async deleteDatabase(ctx: CommandContext, event: RecordedEvent, databaseId: string, name: string): Promise<void> {
    await this.caughtUp(event);
    const registry = await this.registryState(event.metadata.orgId);
    const entry = registry.byName[name];
    if (!entry || entry.databaseId !== databaseId) return; // already deleted (repeat after a crash)
    await this.resources.purgeDatabase(databaseId);
    const contentStreams = await this.resources.streamsOf(databaseId);
    for (const s of contentStreams) await this.store.deleteStream(s);
    await this.store.deleteStream(streams.database(databaseId));
    await handleCommand<RegistryState, DatabaseEvent, null>(
      this.store,
      streams.orgDatabases(event.metadata.orgId),
      { initial: initialRegistry, evolve: evolveRegistry },
      (_c, st) =>
        st.byName[name]?.databaseId === databaseId
          ? [{ type: 'DatabaseDeleted', data: { databaseId, name, requestedBy: event.metadata.actor, requestedAt: event.metadata.occurredAt, streamsDeleted: contentStreams.length + 1, itemsDeleted: itemStreamCount(contentStreams) } }]
          : [],
      null,
      ctx,
    );
  }

  private async deleteCollection(ctx: CommandContext, event: RecordedEvent, databaseId: string, collection: string): Promise<void> {
    await this.caughtUp(event);
    const history = await this.store.readStream(streams.database(databaseId));
    const state = history.reduce((s, h) => evolveDatabase(s, h), initialDatabase());
    if (state.collections.get(collection) !== true) return; // already deleted
    await this.resources.purgeCollection(databaseId, collection);
    const contentStreams = await this.resources.streamsOf(databaseId, collection);
    for (const s of contentStreams) await this.store.deleteStream(s);
    await handleCommand<ReturnType<typeof initialDatabase>, DatabaseEvent, null>(
      this.store,
      streams.database(databaseId),
      { initial: initialDatabase, evolve: evolveDatabase },
      (_c, st) =>
        st.collections.get(collection) === true
          ? [{ type: 'CollectionDeleted', data: { databaseId, collection, requestedBy: event.metadata.actor, requestedAt: event.metadata.occurredAt, itemsDeleted: itemStreamCount(contentStreams) } }]
          : [],
      null,
      ctx,
    );
  }

  /**
   * Every read model must have seen everything before the request, so the stream list is complete, and so should the
   * search index: a chunk write it was doing for an event before the request would land after the purge and stay.
   * (Writes it does from then on find the collection not active, or the database's index gone, and are skipped.)
   * Not caught up within CAUGHT_UP_WAIT_MS: logged, and the deletion goes on, since this processor also provisions
   * every new database and must not stop behind one stuck read model.
   */
  private async caughtUp(event: RecordedEvent): Promise<void> {
    const names = [...this.runner.readModels.map((p) => p.name), 'search-index'].filter((n) => this.runner.subscribers.some((s) => s.name === n));
    if (!(await this.runner.waitFor(event.position, names, CAUGHT_UP_WAIT_MS))) {
      const behind = (await this.runner.status()).filter((s) => names.includes(s.name) && s.position < event.position).map((s) => `${s.name} at ${s.position}`);
      this.log?.error({ event: event.type, position: event.position, behind }, 'deleting before every read model and the search index reached the request: verify them afterwards');
    }
  }

  private async registryState(orgId: string): Promise<RegistryState> {
    const history = await this.store.readStream(streams.orgDatabases(orgId));
    return history.reduce((s, h) => evolveRegistry(s, h), initialRegistry());
  }
}

/** How long a deletion waits for the read models and the search index to reach its request. */
const CAUGHT_UP_WAIT_MS = 60_000;

/**
 * Item streams among the deleted ones (the others are queries, deliveries, feedback): `item-<database>-<key>`. This
 * includes the streams of items deleted one by one before (their ItemDeleted was still in them).
 */
function itemStreamCount(contentStreams: string[]): number {
  return contentStreams.filter((s) => s.startsWith('item-')).length;
}
