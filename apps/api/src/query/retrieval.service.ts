import { Inject, Injectable } from '@nestjs/common';
import { isVisible } from '@crs/domain/acl';
import { applyRecency, fuseScores } from '@crs/domain/ranking';
import type { KeywordOperator, LeanCandidate, SearchFilter, Store, SearchIndex } from '@crs/search/search-index.port';
import type { AppConfig } from '@crs/config';
import type { DataSource } from 'typeorm';
import { type Embedder, sameVectorSpace } from '@crs/embeddings';
import type { SearchCatalog, IndexRef } from '@crs/projections/search-index/search-catalog';
import type { StepClock } from '@crs/domain/step-clock';
import { APP_CONFIG, BLOB_STORE, DATA_SOURCE, EMBEDDER, QUERY_STEP_CLOCK, SEARCH_CATALOG, SEARCH_INDEX } from '@crs/platform/tokens';
import type { BlobStore } from '@crs/persistence/blob-store';
import { chunkIdFor, parseChunkList } from '@crs/search/chunk-docs';
import { conversationNeighbours, itemsToCheck, storeFacets, type ItemCheckRow } from '@crs/projections/items/items.queries';
import { type ContextWeights, lendScores, type Neighbour } from '@crs/domain/retrieval/conversation-context';
import { candidatePool, type PoolSize } from '@crs/domain/retrieval/pool-size';
import { StoreFacetCache, withoutVacuousClauses } from './store-facets';

const STORES: readonly Store[] = ['knowledge', 'memory'];

export interface RetrievalRequest {
  databaseId: string;
  /** undefined = every collection */
  collections?: string[];
  stores: Store[];
  query: string;
  /** text embedded for the vector search (query plus caller-supplied additional context) */
  vectorText: string;
  limit: number;
  alpha: number;
  operator?: KeywordOperator;
  caller: string[] | null;
  includeApps: boolean;
  metadata?: SearchFilter['metadata'];
  additionalMetadata?: SearchFilter['additionalMetadata'];
  recencyBias: number;
  /** restrict to these item keys (graph expansion, forceful relations) */
  itemKeys?: string[];
}

export interface RankedChunk {
  /** The engine's hit: ids, version and text are all the answer needs (the rest comes from the read model). */
  candidate: LeanCandidate;
  item: ItemCheckRow;
  score: number;
  keyword: number;
  vector: number;
}

/** Conversation context: at least this many of the best keyword hits lend to their neighbours. */
const CONTEXT_LENDERS_MIN = 10;
/** Query vectors kept in process (by text), so thinking mode and repeated queries do not embed again. */
const QUERY_VECTORS = 512;

/**
 * Hybrid retrieval: keyword and vector candidates from the search index (filters pushed down, ACL included),
 * fused and ranked here, then every hit is checked against the authoritative items read model (status,
 * expiry, ACL, and that the chunk belongs to the item's current content), so a lagging index can never leak
 * or resurrect anything.
 */
@Injectable()
export class RetrievalService {
  private readonly queryVectors = new Map<string, Promise<Float32Array>>();
  /** Conversation context weights (conversation-context.ts; RETRIEVAL_CONTEXT_*). */
  private readonly context: ContextWeights;
  /** Candidate pool per engine call (pool-size.ts; RETRIEVAL_POOL_*). */
  private readonly pool: PoolSize;
  /** What each store of a database holds (its collections, whether anything expires): which filter clauses can go. */
  readonly facets: StoreFacetCache;

  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    @Inject(SEARCH_CATALOG) private readonly catalog: SearchCatalog,
    @Inject(SEARCH_INDEX) private readonly searchIndex: SearchIndex,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(QUERY_STEP_CLOCK) private readonly queryClock: StepClock,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.context = config.retrieval.context;
    this.pool = config.retrieval.pool;
    this.facets = new StoreFacetCache((databaseId) => storeFacets(this.ds, databaseId, STORES));
  }

  /** The query's vector, from a small in-process LRU in front of the embedder. */
  embedQuery(text: string): Promise<Float32Array> {
    const hit = this.queryVectors.get(text);
    if (hit) {
      this.queryVectors.delete(text); // most recently used last
      this.queryVectors.set(text, hit);
      return hit;
    }
    // embedOnce: a fast in-process embedder skips the Postgres cache (a read and a write per new query text).
    const embedder = this.embedder;
    const pending = (embedder.embedOnce ? embedder.embedOnce([text]) : embedder.embed([text])).then((v) => v[0]);
    this.queryVectors.set(text, pending);
    pending.catch(() => this.queryVectors.get(text) === pending && this.queryVectors.delete(text));
    if (this.queryVectors.size > QUERY_VECTORS) this.queryVectors.delete(this.queryVectors.keys().next().value!);
    return pending;
  }

  /**
   * Whether an index holds vectors of the model that embeds queries here. The database's record says so too, but a
   * re-embed swaps the index first and records the change after: in between, vectors of two models are never compared.
   */
  queryVectorsFit(ref: IndexRef): boolean {
    return ref.modelId === null || sameVectorSpace({ modelId: ref.modelId, dimensions: ref.dimensions }, this.embedder);
  }

  async retrieve(req: RetrievalRequest): Promise<RankedChunk[]> {
    const now = Date.now();
    const pool = candidatePool(this.pool, req.limit);
    const request: SearchFilter = {
      collections: req.collections,
      now,
      includeApps: req.includeApps,
      principalsAny: req.caller,
      metadata: req.metadata,
      additionalMetadata: req.additionalMetadata,
      itemIds: req.itemKeys,
    };
    const clock = this.queryClock;
    const vectorPromise: Promise<Float32Array | null> = req.alpha > 0 ? clock.timed('embed', 1, () => this.embedQuery(req.vectorText)) : Promise.resolve(null);
    // Unhandled until awaited below: a failed embedding must not become an unhandled rejection meanwhile.
    vectorPromise.catch(() => undefined);
    // Per store: the engine's keyword and vector candidates. Each list's read-model rows (which the check below needs)
    // are fetched as soon as that list arrives, while the other calls may still be searching; conversation context
    // loads its hits' rows together with their neighbours.
    const rows = new ItemRows((keys) => this.items(req.databaseId, keys));
    const facets = this.facets.of(req.databaseId);
    const perStore = await Promise.all(
      req.stores.map(async (store) => {
        const [ref, held] = await Promise.all([this.catalog.entry(req.databaseId, store), facets]);
        if (!ref) return { kw: [] as LeanCandidate[], vec: [] as LeanCandidate[] };
        const index = ref.name;
        const filter = withoutVacuousClauses(request, held.get(store));
        const load = (hits: LeanCandidate[]) => clock.timed(`read_model.${store}`, 1, () => rows.load(hits.map((c) => c.itemId))).then(() => hits);
        // Lean hits: the engine reads ids, version and text only (metadata, ACL, dates come from the read model).
        const [kw, vec] = await Promise.all([
          req.alpha < 1 && req.query.trim()
            ? clock
                .timed(`engine.keyword.${store}`, 1, () => this.searchIndex.keywordSearch(index, req.query, { limit: pool, filter, operator: req.operator, fields: 'lean' }))
                .then((hits) => (store === 'memory' ? clock.timed('conversation_context', 1, () => this.withConversationContext(req, hits, now, rows)) : hits))
                .then(load)
            : Promise.resolve([]),
          vectorPromise.then((v) => (v && this.queryVectorsFit(ref) ? clock.timed(`engine.vector.${store}`, 1, () => this.searchIndex.vectorSearch(index, v, { limit: pool, filter, fields: 'lean' })).then(load) : [])),
        ]);
        return { kw, vec };
      }),
    );
    const byId = new Map<string, LeanCandidate>();
    const kw = perStore.flatMap((p) => p.kw);
    const vec = perStore.flatMap((p) => p.vec);
    for (const c of [...kw, ...vec]) if (!byId.has(c.chunkId)) byId.set(c.chunkId, c);
    const fused = fuseScores(
      kw.map((c) => ({ id: c.chunkId, score: c.score })),
      vec.map((c) => ({ id: c.chunkId, score: c.score })),
      req.alpha,
    );
    if (!fused.length) return [];
    const ranked: RankedChunk[] = [];
    for (const f of fused) {
      const candidate = byId.get(f.id)!;
      const item = rows.get(candidate.itemId);
      if (!item || !inCollections(item, req) || !this.servable(item, candidate, req.caller, now) || !matchesFilters(item, req.metadata, req.additionalMetadata) || !appsAllowed(item, req)) continue;
      const score = applyRecency(f.score, now - new Date(item.updated_at).getTime(), req.recencyBias);
      ranked.push({ candidate, item, score, keyword: f.keyword, vector: f.vector });
    }
    ranked.sort((a, b) => b.score - a.score || (a.candidate.chunkId < b.candidate.chunkId ? -1 : 1));
    return ranked.slice(0, req.limit);
  }

  /**
   * Conversation context (conversation-context.ts): memory hits the caller may see lend part of their keyword
   * score to the memories right after and before them in the same conversation, which become candidates if they
   * were not. Only for the default `or` keyword query (`and` and `phrase` promise matches) over the whole store.
   */
  private async withConversationContext(req: RetrievalRequest, hits: LeanCandidate[], now: number, rows: ItemRows): Promise<LeanCandidate[]> {
    const { after, before } = this.context;
    if (!hits.length || (!after.length && !before.length) || (req.operator ?? 'or') !== 'or' || req.itemKeys) return hits;
    // The best hits lend (as many as asked for, at least 10): lower ones lend little, and fewer lenders are cheaper.
    const lenders = hits.slice(0, Math.max(req.limit, CONTEXT_LENDERS_MIN));
    const lenderKeys = [...new Set(lenders.map((h) => h.itemId))];
    // The rows of all the hits (the check needs them anyway) and the lenders' neighbours in one round trip's time:
    // neighbours of a hit that fails the checks are dropped below.
    const [, runsOf] = await Promise.all([
      rows.load(hits.map((h) => h.itemId)),
      this.queryClock.timed('conversation_context.neighbours', 1, () => conversationNeighbours(this.ds, req.databaseId, lenderKeys, after.length, before.length)),
    ]);
    const own = new Map<string, number>();
    for (const h of lenders) {
      const item = rows.get(h.itemId);
      if (!item || item.kind === 'inferred' || !inCollections(item, req) || !this.servable(item, h, req.caller, now) || !matchesFilters(item, req.metadata, req.additionalMetadata)) continue;
      own.set(h.itemId, Math.max(own.get(h.itemId) ?? -Infinity, h.score));
    }
    if (!own.size) return hits;
    const neighbours = new Map<string, Neighbour[]>();
    const runs = new Map<string, typeof runsOf>();
    for (const r of runsOf) if (own.has(r.hit)) runs.set(`${r.hit}/${r.dir}`, [...(runs.get(`${r.hit}/${r.dir}`) ?? []), r]);
    for (const run of runs.values()) {
      run.sort((a, b) => Number(a.seq) - Number(b.seq));
      for (const r of run) {
        if (!r.same) break; // another conversation (or user) starts here
        neighbours.set(r.hit, [...(neighbours.get(r.hit) ?? []), { itemKey: r.item_key, distance: r.dir * Number(r.seq) }]);
      }
    }
    const lent = lendScores(own, neighbours, this.context);
    const added = (key: string) => (lent.get(key) ?? 0) - (own.get(key) ?? 0);
    const out = hits.map((h) => (added(h.itemId) > 0 ? { ...h, score: h.score + added(h.itemId) } : h));
    const inHits = new Set(hits.map((h) => h.itemId));
    const fresh = [...lent.keys()].filter((key) => !inHits.has(key));
    if (fresh.length) {
      // The neighbours' chunks from their chunk lists (what the index holds for them, without another engine call:
      // blobs are cached in process, else one statement), and their rows for the checks in retrieve(), which every
      // candidate passes or is dropped (status, expiry, ACL, filters; the collection is the hit's). A chunk carries
      // the position of the chunk list it was read from: a neighbour chunked again meanwhile fails the version check.
      const listed = new Map(runsOf.filter((r) => r.chunks_sha256 !== null).map((r) => [r.item_key, r]));
      const keys = fresh.filter((key) => listed.has(key));
      const [lists] = await Promise.all([
        this.queryClock.timed('conversation_context.chunk_lists', 1, () => this.blobs.getMany(keys.map((key) => ({ databaseId: req.databaseId, sha256: listed.get(key)!.chunks_sha256! })))),
        this.queryClock.timed('conversation_context.neighbour_rows', 1, () => rows.load(fresh)),
      ]);
      keys.forEach((key, i) => {
        const bytes = lists[i];
        if (!bytes) return; // deleted since (its collection or database)
        const version = Number(listed.get(key)!.chunked_position);
        for (const c of parseChunkList(bytes)) {
          const chunkId = chunkIdFor(key, c.index);
          out.push({ chunkId, itemId: key, score: lent.get(key)!, doc: { chunkId, itemId: key, text: c.text, version } });
        }
      });
    }
    return out.sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1));
  }

  /** The authoritative check of one hit against the read model. */
  servable(item: ItemCheckRow, candidate: LeanCandidate, caller: string[] | null, now: number): boolean {
    if (item.status !== 'graph_creation' && item.status !== 'completed') return false;
    if (item.expires_at && new Date(item.expires_at).getTime() <= now) return false;
    // The chunk must belong to the item's current content (attribute updates re-stamp chunks with later versions).
    if (item.chunked_position === null || candidate.doc.version < Number(item.chunked_position)) return false;
    if (item.kind === 'inferred') {
      // Nothing derived from a document the caller may not see: the source's current ACL decides.
      if (item.source_missing) return false;
      if (!isVisible(item.source_acl, caller)) return false;
    }
    return isVisible(item.acl, caller);
  }

  async items(databaseId: string, keys: string[]): Promise<Map<string, ItemCheckRow>> {
    if (!keys.length) return new Map();
    const rows = await itemsToCheck(this.ds, databaseId, keys);
    return new Map(rows.map((r) => [r.item_key, r]));
  }
}

/**
 * The read-model rows of one query's candidates, fetched in as few round trips as the candidates' arrival allows:
 * each key is asked for once, by the first list that holds it; later lists wait for the rows already on their way.
 */
export class ItemRows {
  private readonly pending = new Map<string, Promise<Map<string, ItemCheckRow>>>();
  private readonly rows = new Map<string, ItemCheckRow>();

  constructor(private readonly fetch: (keys: string[]) => Promise<Map<string, ItemCheckRow>>) {}

  async load(keys: string[]): Promise<void> {
    const fresh = [...new Set(keys)].filter((key) => !this.pending.has(key));
    if (fresh.length) {
      const batch = this.fetch(fresh).then((found) => {
        for (const [key, row] of found) this.rows.set(key, row);
        return found;
      });
      for (const key of fresh) this.pending.set(key, batch);
    }
    await Promise.all(new Set(keys.map((key) => this.pending.get(key)!)));
  }

  /** The row of a loaded key; undefined when it is not in the read model (or was never loaded). */
  get(key: string): ItemCheckRow | undefined {
    return this.rows.get(key);
  }
}

/**
 * The collections asked for, re-checked on the read model: the engine's collection clause is left out when it keeps
 * every row (store-facets.ts), so the check here is what holds a hit to them.
 */
export function inCollections(item: ItemCheckRow, req: Pick<RetrievalRequest, 'collections'>): boolean {
  return !req.collections || req.collections.includes(item.collection);
}

/**
 * `query_apps` re-checked on the read model: with false, no connector or app content (a synced document, a memory
 * inferred from one, an app item), whatever the index marked the chunk with.
 */
export function appsAllowed(item: ItemCheckRow, req: Pick<RetrievalRequest, 'includeApps'>): boolean {
  return req.includeApps || !(item.synced_source !== null || item.kind === 'app' || typeof item.additional_metadata?.connector_id === 'string');
}

/** Metadata filters re-checked on the read model: an index with stale attributes can narrow, never widen. */
export function matchesFilters(item: ItemCheckRow, metadata?: SearchFilter['metadata'], additional?: SearchFilter['additionalMetadata']): boolean {
  const check = (values: Record<string, unknown>, wanted?: Record<string, unknown>) =>
    !wanted || Object.entries(wanted).every(([k, v]) => (Array.isArray(v) ? v.some((x) => same(values?.[k], x)) : same(values?.[k], v)));
  return check(item.metadata, metadata) && check(item.additional_metadata, additional);
}

function same(actual: unknown, wanted: unknown): boolean {
  if (actual === wanted) return true;
  if (actual !== null && typeof actual === 'object') return JSON.stringify(actual) === wanted;
  return false;
}
