import { isEventOf, type DomainEventType } from '@crs/domain/domain-event';
import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import type { ChunkDoc, Store } from '@crs/search/search-index.port';
import type { CatalogEntry, IndexRef, SearchCatalog } from './search-catalog';
import type { EmbedderSpec } from '@crs/domain/events';
import { CATALOG_CACHE_MS, indexNameFor, verifyIndexName } from './search-catalog';
import type { IndexTarget, SearchIndexSubscriber, WrittenItem } from './search-index.subscriber';

const PAGE = 1000;
/** Events read per page while replaying (the handled types only where the log filters them; the next page is read while one is written). */
const REPLAY_PAGE = 5000;
/**
 * Handled events per engine write while replaying: every write is a commit per index (a new table version), so
 * fewer, larger batches are what makes a rebuild fast. The outcome is the same for any batching (handleBatch).
 */
const REPLAY_BATCH = 4000;

/**
 * Replays the log after `after` (up to `until`, inclusive) into the subscriber, in batches of up to REPLAY_BATCH
 * handled events (each prepared, then written: prepareBatch, writePrepared); returns the position the log was read to
 * (up to `until`, or the head) and how many handled events there were. When it fails, it returns only once the batch
 * being written has finished, so nothing of the replay still writes after it.
 */
async function replayLog(
  store: EventStore,
  subscriber: SearchIndexSubscriber,
  target: IndexTarget,
  after: number,
  until: number,
  onProgress?: (position: number) => void,
  /** collects what was written (a replay beside the live service checks it afterwards: dropSuperseded) */
  written?: WrittenItem[],
): Promise<{ position: number; events: number }> {
  let position = after;
  let events = 0;
  let batch: RecordedEvent[] = [];
  // One batch is written to the engine while the next one is read and prepared (rows, chunk lists, vectors: Postgres
  // work); the writes themselves stay in log order, one batch after the other.
  let writing: Promise<unknown> = Promise.resolve();
  const flush = async () => {
    if (batch.length) {
      const prepared = await subscriber.prepareBatch(batch, target);
      await writing;
      writing = subscriber.writePrepared(prepared).then((wrote) => written?.push(...wrote));
      writing.catch(() => undefined); // awaited by the next flush or at the end; must not go unhandled meanwhile
    }
    events += batch.length;
    batch = [];
    onProgress?.(position);
  };
  // Only the event types the subscriber handles, where the log can filter them (Postgres: a search-index replay
  // reads about a quarter of the log); the whole log otherwise.
  const read = (from: number): Promise<{ events: RecordedEvent[]; scannedTo: number }> => {
    const p = store.readAllOfTypes
      ? store.readAllOfTypes(from, subscriber.handles, REPLAY_PAGE)
      : store.readAll({ after: from, maxCount: REPLAY_PAGE }).then((page) => ({ events: page, scannedTo: page.length ? page[page.length - 1].position : from }));
    p.catch(() => undefined); // awaited below; must not go unhandled while a batch is written
    return p;
  };
  let next = read(after);
  try {
    while (true) {
      const { events: page, scannedTo } = await next;
      const more = page.length === REPLAY_PAGE && scannedTo < until;
      if (more) next = read(scannedTo);
      for (const ev of page) {
        if (ev.position > until) break;
        if (isEventOf(ev, subscriber.handles)) batch.push(ev);
        position = ev.position;
        if (batch.length >= REPLAY_BATCH) await flush();
      }
      position = Math.max(position, Math.min(scannedTo, until));
      if (!more) break;
    }
    await flush();
  } finally {
    await writing.catch(() => undefined);
  }
  await writing;
  return { position, events };
}

/**
 * The last replay of a rebuild, when the live service already indexes into the new generation too: what it wrote for
 * an item the service deleted meanwhile is removed again afterwards (its write could land after the service's delete).
 */
export async function replayTail(store: EventStore, subscriber: SearchIndexSubscriber, target: IndexTarget, after: number) {
  const written: WrittenItem[] = [];
  const tail = await replayLog(store, subscriber, target, after, Infinity, undefined, written);
  await subscriber.dropSuperseded(written);
  return tail;
}

/**
 * Builds a fresh generation of every search index from the log (vectors from the embedding cache, never the
 * model), then swaps the catalog pointers and drops the old indexes. Events appended while it ran are replayed
 * into the new generation after the swap, and again once every process sees the swap (writes are idempotent by
 * version).
 */
export async function rebuildSearchIndex(
  store: EventStore,
  catalog: SearchCatalog,
  subscriber: SearchIndexSubscriber,
  onProgress?: (position: number, head: number) => void,
  /** only this database's indexes (a re-embed), in this vector space */
  only?: { databaseId: string; space: EmbedderSpec },
) {
  return catalog.exclusively(only ? 'the re-embed' : 'the rebuild', () => rebuildGenerations(store, catalog, subscriber, onProgress, only));
}

async function rebuildGenerations(
  store: EventStore,
  catalog: SearchCatalog,
  subscriber: SearchIndexSubscriber,
  onProgress?: (position: number, head: number) => void,
  only?: { databaseId: string; space: EmbedderSpec },
) {
  const started = Date.now();
  const live = (await catalog.all()).filter((e) => !only || e.databaseId === only.databaseId);
  // Each new generation holds the vector space of the one it replaces (its vectors from the embedding cache), or a
  // re-embed's new one.
  const next = new Map(
    live.map((e) => [
      `${e.databaseId}/${e.store}`,
      { ...e, indexName: indexNameFor(e.databaseId, e.store, e.generation + 1), generation: e.generation + 1, dimensions: only?.space.dimensions ?? e.dimensions, modelId: only?.space.modelId ?? e.modelId },
    ]),
  );
  for (const e of next.values()) {
    await catalog.index.dropIndex(e.indexName);
    await catalog.index.createIndex(e.indexName, { dimensions: e.dimensions });
  }
  const target = async (databaseId: string, s: Store) => refOf(next.get(`${databaseId}/${s}`));
  const head = await store.headPosition();
  const first = await replayLog(store, subscriber, target, 0, Infinity, (pos) => onProgress?.(pos, Math.max(head, pos)));
  const reached = first.position;
  // Every row folded into the engine's indexes before the new generation serves a query: the background optimize
  // after the last pages may not have run yet (and would not in a process that exits next), and rows left out of
  // the full-text index are scanned flat by every keyword search until a later write folds them.
  for (const e of next.values()) await catalog.index.optimize(e.indexName);
  const olds: string[] = [];
  for (const [key, e] of [...next.entries()]) {
    if (await catalog.replaceGeneration(e.databaseId, e.store, e.indexName, e.generation, e, e.generation - 1)) {
      olds.push(indexNameFor(e.databaseId, e.store, e.generation - 1));
    } else {
      // Deleted (or rebuilt by another run) while this one ran: its new index goes, nothing is registered.
      next.delete(key);
      await catalog.index.dropIndex(e.indexName);
    }
  }
  const swappedAt = Date.now();
  // Appended while the first pass ran: replayed into the new generation (now live; writes are idempotent by version).
  const rest = await replayLog(store, subscriber, target, reached, Infinity);
  // A running service caches the catalog for up to CATALOG_CACHE_MS: its queries may still go to the old
  // generation that long, and so may its live indexing. So the old indexes are dropped only after that, and what was
  // appended meanwhile is replayed once more into the new generation: the live service may have indexed it into the
  // old one, which is about to go (a rebuild while memories kept arriving lost them until the next rebuild).
  await new Promise((r) => setTimeout(r, Math.max(0, swappedAt + CATALOG_CACHE_MS + 250 - Date.now())));
  const tail = await replayTail(store, subscriber, target, rest.position);
  for (const old of olds) {
    await catalog.index.dropIndex(old);
    await catalog.index.dropIndex(verifyIndexName(old)); // left beside it by a killed verify
  }
  // and whatever an earlier rebuild killed after its swap left behind
  for (const e of next.values()) await catalog.dropGenerations(e.databaseId, e.store, e.generation - 2, e.generation - 1);
  const events = first.events + rest.events + tail.events;
  return { events, position: reached, ms: Date.now() - started, indexes: next.size };
}

/** Every chunk of every live index, in a stable order: what `verify` compares and tests snapshot. */
export async function snapshotSearchIndex(catalog: SearchCatalog, names?: Map<string, string>): Promise<Record<string, ChunkDoc[]>> {
  const out: Record<string, ChunkDoc[]> = {};
  for (const e of await catalog.all()) {
    const name = names?.get(`${e.databaseId}/${e.store}`) ?? e.indexName;
    const docs: ChunkDoc[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await catalog.index.listChunks(name, { limit: PAGE, offset });
      docs.push(...page);
      if (page.length < PAGE) break;
    }
    out[`${e.databaseId}/${e.store}`] = docs;
  }
  return out;
}

export interface SearchVerifyResult {
  equal: boolean;
  position: number;
  indexes: { key: string; chunks: number }[];
  firstDifference?: { index: string; chunkId: string | null; live: string | null; rebuilt: string | null };
  /** the log moved on during each comparison (events appended during the last one): writes were arriving */
  unsettled?: { appended: number };
  /**
   * Nothing was compared: the live search index has not handled the log up to the head within BEHIND_WAIT_MS (the
   * service is stopped, or busy catching up). `pending` is the first event it still has to handle.
   */
  behind?: { indexedTo: number; pending: number };
}

/** How long verify waits for the live search index to handle what the log holds before comparing. */
export const BEHIND_WAIT_MS = 30_000;

/** Rebuilds every index into throw-away names up to the current head and compares them chunk by chunk with the live ones. */
export async function verifySearchIndex(store: EventStore, catalog: SearchCatalog, subscriber: SearchIndexSubscriber, opts: { behindWaitMs?: number } = {}): Promise<SearchVerifyResult> {
  return catalog.exclusively('verify', async () => {
    // Chunks carry an item's attributes as the items read model holds them when written, so while writes arrive a
    // replay up to the head can stamp a later ACL than the live index held at that head: a comparison is only
    // meaningful over a quiet log. A difference seen while the log moved on is measured again (up to 3 times) and
    // otherwise reported as unsettled rather than as a fault.
    let result: SearchVerifyResult;
    for (let attempt = 1; ; attempt++) {
      result = await verifyGenerations(store, catalog, subscriber, opts.behindWaitMs ?? BEHIND_WAIT_MS);
      if (result.equal || result.behind) return result;
      const appended = (await store.headPosition()) - result.position;
      if (appended <= 0) return result;
      if (attempt === 3) return { ...result, unsettled: { appended } };
    }
  });
}

async function verifyGenerations(store: EventStore, catalog: SearchCatalog, subscriber: SearchIndexSubscriber, behindWaitMs: number): Promise<SearchVerifyResult> {
  const head = await store.headPosition();
  // A live index that has not yet handled everything up to the head would differ from the replay without being wrong:
  // wait for it, and say so if it does not get there, rather than report a difference.
  const behind = await waitUntilIndexed(store, catalog, subscriber, head, behindWaitMs);
  if (behind) return { equal: false, position: head, indexes: [], behind };
  const live = await catalog.all();
  const shadow = new Map(live.map((e) => [`${e.databaseId}/${e.store}`, { ...e, indexName: verifyIndexName(e.indexName) }]));
  try {
    for (const e of shadow.values()) {
      await catalog.index.dropIndex(e.indexName);
      await catalog.index.createIndex(e.indexName, { dimensions: e.dimensions });
    }
    const target = async (databaseId: string, s: Store) => refOf(shadow.get(`${databaseId}/${s}`));
    await replayLog(store, subscriber, target, 0, head);
    const a = await snapshotSearchIndex(catalog);
    const liveNames = new Map(live.map((e) => [`${e.databaseId}/${e.store}`, e.indexName]));
    const b = await snapshotSearchIndex(catalog, new Map([...shadow].map(([k, e]) => [k, e.indexName])));
    const result: SearchVerifyResult = { equal: true, position: head, indexes: Object.keys(a).map((key) => ({ key, chunks: a[key].length })) };
    for (const key of Object.keys(a)) {
      // A chunk stored twice (what concurrent writers left before the table lock): said as such, not as a shift. The
      // snapshot pages by offset, so a row the service inserts meanwhile can show one row twice: the table decides.
      const liveDocs = await dedupedSnapshot(catalog, liveNames.get(key)!, a[key]);
      if ('twice' in liveDocs) {
        result.equal = false;
        result.firstDifference = { index: key, chunkId: liveDocs.twice.chunkId, live: `stored more than once: ${serialize(liveDocs.twice)}`, rebuilt: 'once' };
        return result;
      }
      const x = liveDocs.docs.filter((d) => d.version <= head).map(serialize);
      const y = b[key].filter((d) => d.version <= head).map(serialize);
      for (let i = 0; i < Math.max(x.length, y.length); i++) {
        if (x[i] !== y[i]) {
          result.equal = false;
          result.firstDifference = { index: key, chunkId: (x[i] ?? y[i] ?? '').split('|')[0] || null, live: x[i] ?? null, rebuilt: y[i] ?? null };
          return result;
        }
      }
    }
    return result;
  } finally {
    for (const e of shadow.values()) await catalog.index.dropIndex(e.indexName).catch(() => undefined);
  }
}

/** Null once the live search index has handled every event of its types up to `head`; otherwise how far it got, after BEHIND_WAIT_MS. */
async function waitUntilIndexed(store: EventStore, catalog: SearchCatalog, subscriber: SearchIndexSubscriber, head: number, waitMs: number): Promise<SearchVerifyResult['behind'] | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const indexedTo = await catalog.indexedTo();
    // Its checkpoint moves past events of other types lazily: only an event it handles counts as pending.
    const pending = indexedTo >= head ? null : await firstOfTypes(store, indexedTo, head, subscriber.handles);
    if (pending === null) return null;
    if (Date.now() > deadline) return { indexedTo, pending };
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The position of the first event of `types` after `after` and up to `until`, or null. */
async function firstOfTypes(store: EventStore, after: number, until: number, types: readonly DomainEventType[]): Promise<number | null> {
  if (store.readAllOfTypes) {
    const { events } = await store.readAllOfTypes(after, types, 1);
    return events.length && events[0].position <= until ? events[0].position : null;
  }
  for (let from = after; from < until; ) {
    const page = await store.readAll({ after: from, maxCount: REPLAY_PAGE });
    if (!page.length) return null;
    const hit = page.find((e) => e.position <= until && isEventOf(e, types));
    if (hit) return hit.position;
    from = page[page.length - 1].position;
  }
  return null;
}

const refOf = (e: CatalogEntry | undefined): IndexRef | null => (e ? { name: e.indexName, modelId: e.modelId, dimensions: e.dimensions } : null);

/** A live snapshot with each chunk once, or the first chunk the table itself holds more than once. */
async function dedupedSnapshot(catalog: SearchCatalog, indexName: string, docs: ChunkDoc[]): Promise<{ docs: ChunkDoc[] } | { twice: ChunkDoc }> {
  const seen = new Set<string>();
  const out: ChunkDoc[] = [];
  for (const d of docs) {
    if (seen.size === seen.add(d.chunkId).size) {
      const distinct = new Set(docs.filter((x) => x.itemId === d.itemId).map((x) => x.chunkId)).size;
      if ((await catalog.index.count(indexName, { itemIds: [d.itemId] })) > distinct) return { twice: d };
      continue; // seen twice only by the paging
    }
    out.push(d);
  }
  return { docs: out };
}

/** A chunk as comparable text: every field, vectors as exact float32 bytes. */
export function serialize(d: ChunkDoc): string {
  const { vector, ...rest } = d;
  const bytes = Buffer.from(new Float32Array(vector as ArrayLike<number>).buffer).toString('base64');
  return `${d.chunkId}|${JSON.stringify(rest, Object.keys(rest).sort())}|${bytes}`;
}
