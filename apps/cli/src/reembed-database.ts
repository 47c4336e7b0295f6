import type { DataSource } from 'typeorm';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { CommandContext } from '@crs/eventstore/command-handling';
import { handleCommand } from '@crs/eventstore/command-handling';
import { decideDatabase, evolveDatabase, initialDatabase, type DatabaseCommand } from '@crs/domain/database.decider';
import type { DatabaseEvent, EmbedderSpec } from '@crs/domain/events';
import type { ItemIngested } from '@crs/domain/items/item.events';
import { decideItem } from '@crs/domain/items/item.decider';
import { streams } from '@crs/domain/streams';
import { sameVectorSpace, type Embedder } from '@crs/embeddings';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { decideOnItems, lastPosition } from '@crs/eventstore/item-stream';
import { indexNameFor, type SearchCatalog } from '@crs/projections/search-index/search-catalog';
import { rebuildSearchIndex } from '@crs/projections/search-index/search-index-rebuild';
import type { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import { itemsErroredWithEmbedderMismatch } from '@crs/projections/items/items.queries';

export interface ReembedResult {
  /** false when the database already embeds with this embedder, its indexes hold it and no item waits for it (nothing was done) */
  changed: boolean;
  previous: EmbedderSpec;
  embedder: EmbedderSpec;
  indexes: number;
  /** ItemChunked/attribute events replayed into the new indexes (their chunks embedded with the new model) */
  events: number;
  /** items that had errored with EMBEDDER_MISMATCH, queued again */
  requeued: number;
  ms: number;
}

/**
 * Moves a database to another embedder (docs/databases.md, "Changing the embedder"), in an order that a kill at any
 * point leaves resumable by running it again:
 * 1. unless the database's live indexes already hold the new vector space, builds a new generation of them from the
 *    log, every chunk embedded with `embedder` (through the embedding cache, which then holds both vector spaces),
 *    and swaps the catalog to it; queries never see a mix of vector spaces;
 * 2. records DatabaseEmbedderChanged on the database's stream (the databases read model follows): only now do the
 *    pipeline and queries take the database for the new model's;
 * 3. queues again the items that errored with EMBEDDER_MISMATCH (their last ItemIngested is appended again).
 * Recording the change first (as before) and being killed in step 1 left a database whose record named the new model
 * while its indexes held the old one: its queries failed, its chunk writes failed, and a second run had nothing to do.
 * `runner` must be running the read models (the caller starts them), so step 3 sees step 2.
 */
export async function reembedDatabase(
  deps: { ds: DataSource; store: EventStore; runner: ProjectionRunner; catalog: SearchCatalog; subscriber: SearchIndexSubscriber; embedder: Embedder },
  db: { id: string; orgId: string },
  ctx: CommandContext,
  onProgress?: (position: number, head: number) => void,
): Promise<ReembedResult> {
  const started = Date.now();
  const embedder: EmbedderSpec = { modelId: deps.embedder.modelId, dimensions: deps.embedder.dimensions };
  const createdWith = await embedderAtCreation(deps.store, db);
  const history = await deps.store.readStream(streams.database(db.id));
  const recordedBefore = history.reduce((s, e) => evolveDatabase(s, e), initialDatabase()).embedder ?? createdWith;

  const live = (await deps.catalog.all()).filter((e) => e.databaseId === db.id);
  // A rebuild drops the generation it replaced only after its last replays: one still there means a run was killed
  // after its swap, and the new generation may lack what the service wrote meanwhile. It is built again.
  const unfinished = (await Promise.all(live.map((e) => (e.generation > 1 ? deps.catalog.index.indexExists(indexNameFor(e.databaseId, e.store, e.generation - 1)) : false)))).some(Boolean);
  const inSpace = !unfinished && live.every((e) => e.modelId !== null && sameVectorSpace({ modelId: e.modelId, dimensions: e.dimensions }, embedder));
  // Resuming a run killed after it had recorded the change: what moves is what the indexes held.
  const held = live.find((e) => e.modelId !== null && e.modelId !== embedder.modelId);
  const previous = sameVectorSpace(recordedBefore, embedder) && held ? { modelId: held.modelId!, dimensions: held.dimensions } : recordedBefore;
  const rebuilt = inSpace ? { indexes: 0, events: 0 } : await rebuildSearchIndex(deps.store, deps.catalog, deps.subscriber, onProgress, { databaseId: db.id, space: embedder });

  const outcome = await handleCommand<ReturnType<typeof initialDatabase>, DatabaseEvent, DatabaseCommand>(
    deps.store,
    streams.database(db.id),
    { initial: initialDatabase, evolve: evolveDatabase },
    decideDatabase,
    { type: 'ChangeEmbedder', databaseId: db.id, embedder, createdWith },
    { ...ctx, databaseId: db.id },
  );
  const recorded = outcome.events.some((e) => e.type === 'DatabaseEmbedderChanged');
  if (outcome.position !== null && !(await deps.runner.waitFor(outcome.position, ['databases', 'items'], 60_000))) throw new Error('the read models did not catch up in time');

  // Items that errored while the database was between models (also those a killed run left errored).
  const errored = await itemsErroredWithEmbedderMismatch(deps.ds, db.id);
  const histories = await deps.store.readStreams(errored.map((r) => streams.item(db.id, r.item_key)));
  const decisions = errored.flatMap((r) => {
    const ingested = [...(histories.get(streams.item(db.id, r.item_key)) ?? [])].reverse().find((e) => e.type === 'ItemIngested');
    if (!ingested) return [];
    const event: ItemIngested = { type: 'ItemIngested', data: ingested.data };
    return [{ ctx, databaseId: db.id, itemKey: r.item_key, decide: (state: Parameters<typeof decideItem>[1]) => (state.live && state.status === 'errored' ? decideItem({ type: 'Ingest', upsert: true, event }, state) : []) }];
  });
  const requeued = await decideOnItems(deps.store, decisions);
  const last = lastPosition(requeued);
  if (last !== null) await deps.runner.waitFor(last, ['items'], 60_000);
  const requeuedCount = requeued.filter((o) => o.events?.length).length;
  return { changed: recorded || rebuilt.indexes > 0 || requeuedCount > 0, previous, embedder, indexes: rebuilt.indexes, events: rebuilt.events, requeued: requeuedCount, ms: Date.now() - started };
}

/** The embedder recorded when the database was created (on the organization's registry stream). */
async function embedderAtCreation(store: EventStore, db: { id: string; orgId: string }): Promise<EmbedderSpec> {
  const created = (await store.readStream(streams.orgDatabases(db.orgId))).filter((e) => e.type === 'DatabaseCreated').find((e) => e.data.databaseId === db.id);
  if (!created) throw new Error(`database ${db.id} has no DatabaseCreated event`);
  return created.data.embedder;
}
