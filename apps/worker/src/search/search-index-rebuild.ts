import type { EventStore } from '../../../../libs/eventstore/src/event-store.port';
import type { ChunkDoc, Store } from '../../../../libs/search/src/search-index.port';
import type { SearchCatalog } from './search-catalog';
import { indexNameFor } from './search-catalog';
import type { SearchIndexSubscriber } from './search-index.subscriber';

const PAGE = 1000;

/**
 * Builds a fresh generation of every search index from the log (vectors from the embedding cache, never the
 * model), then swaps the catalog pointers and drops the old indexes. Events appended while it ran are replayed
 * into the new generation after the swap (writes are idempotent by version).
 */
export async function rebuildSearchIndex(store: EventStore, catalog: SearchCatalog, subscriber: SearchIndexSubscriber, onProgress?: (position: number, head: number) => void) {
  const started = Date.now();
  const live = await catalog.all();
  const next = new Map(live.map((e) => [`${e.databaseId}/${e.store}`, { ...e, indexName: indexNameFor(e.databaseId, e.store, e.generation + 1), generation: e.generation + 1 }]));
  for (const e of next.values()) {
    await catalog.index.dropIndex(e.indexName);
    await catalog.index.createIndex(e.indexName, { dimensions: e.dimensions });
  }
  const target = async (databaseId: string, s: Store) => next.get(`${databaseId}/${s}`)?.indexName ?? null;
  const head = await store.headPosition();
  let events = 0;
  const replay = async (after: number) => {
    let pos = after;
    while (true) {
      const page = await store.readAll({ after: pos, maxCount: PAGE });
      if (!page.length) return pos;
      const relevant = page.filter((ev) => subscriber.handles.includes(ev.type as never));
      if (relevant.length) await subscriber.handleBatch(relevant, target);
      events += relevant.length;
      pos = page[page.length - 1].position;
      onProgress?.(pos, Math.max(head, pos));
    }
  };
  const reached = await replay(0);
  for (const e of next.values()) {
    const old = await catalog.swap(e.databaseId, e.store, e.indexName, e.generation, e.dimensions);
    if (old) await catalog.index.dropIndex(old);
  }
  await replay(reached);
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
}

/** Rebuilds every index into throw-away names up to the current head and compares them chunk by chunk with the live ones. */
export async function verifySearchIndex(store: EventStore, catalog: SearchCatalog, subscriber: SearchIndexSubscriber): Promise<SearchVerifyResult> {
  const live = await catalog.all();
  const shadow = new Map(live.map((e) => [`${e.databaseId}/${e.store}`, `${e.indexName}_verify`]));
  const head = await store.headPosition();
  try {
    for (const e of live) {
      const name = shadow.get(`${e.databaseId}/${e.store}`)!;
      await catalog.index.dropIndex(name);
      await catalog.index.createIndex(name, { dimensions: e.dimensions });
    }
    const target = async (databaseId: string, s: Store) => shadow.get(`${databaseId}/${s}`) ?? null;
    for (let after = 0; ; ) {
      const page = await store.readAll({ after, maxCount: PAGE });
      if (!page.length) break;
      const upToHead = page.filter((ev) => ev.position <= head);
      const relevant = upToHead.filter((ev) => subscriber.handles.includes(ev.type as never));
      if (relevant.length) await subscriber.handleBatch(relevant, target);
      if (upToHead.length < page.length || !upToHead.length) break;
      after = upToHead[upToHead.length - 1].position;
    }
    const a = await snapshotSearchIndex(catalog);
    const b = await snapshotSearchIndex(catalog, shadow);
    const result: SearchVerifyResult = { equal: true, position: head, indexes: Object.keys(a).map((key) => ({ key, chunks: a[key].length })) };
    for (const key of Object.keys(a)) {
      const x = a[key].filter((d) => d.version <= head).map(serialize);
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
    for (const name of shadow.values()) await catalog.index.dropIndex(name).catch(() => undefined);
  }
}

/** A chunk as comparable text: every field, vectors as exact float32 bytes. */
export function serialize(d: ChunkDoc): string {
  const { vector, ...rest } = d;
  const bytes = Buffer.from(new Float32Array(vector as ArrayLike<number>).buffer).toString('base64');
  return `${d.chunkId}|${JSON.stringify(rest, Object.keys(rest).sort())}|${bytes}`;
}
