import { Inject, Injectable } from '@nestjs/common';
import { dot } from '@crs/embeddings';
import { applyRecency } from '@crs/domain/ranking';
import type { Candidate, ChunkDoc, LeanCandidate, Store, SearchIndex } from '@crs/search/search-index.port';
import type { AppConfig } from '@crs/config';
import type { DataSource } from 'typeorm';
import type { SearchCatalog } from '@crs/projections/search-index/search-catalog';
import type { StepClock } from '@crs/domain/step-clock';
import { APP_CONFIG, DATA_SOURCE, QUERY_STEP_CLOCK, SEARCH_CATALOG, SEARCH_INDEX } from '@crs/platform/tokens';
import { GraphContextService } from './graph-context.service';
import { appsAllowed, matchesFilters, RetrievalService, type RankedChunk, type RetrievalRequest } from './retrieval.service';
import { type ThinkingWeights, wideLimit } from '@crs/domain/retrieval/thinking-weights';
import { itemKeysWithIds } from '@crs/projections/items/items.queries';

const chunkIndexOf = (chunkId: string) => Number(chunkId.slice(chunkId.lastIndexOf(':') + 1));

/**
 * Thinking mode: a deeper retrieval than fast. It starts from a wider fast retrieval, finds the entities named in
 * the query and in the top hits, follows the graph one hop, pulls in other chunks that mention those entities
 * (only from completed items the caller may see), and re-ranks everything on vector similarity, keyword score and
 * graph evidence together.
 */
@Injectable()
export class ThinkingService {
  /** Weights and bounds of thinking mode (thinking-weights.ts; THINKING_<NAME> overrides each). */
  private readonly tuning: ThinkingWeights;

  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(SEARCH_CATALOG) private readonly catalog: SearchCatalog,
    @Inject(SEARCH_INDEX) private readonly searchIndex: SearchIndex,
    @Inject(QUERY_STEP_CLOCK) private readonly queryClock: StepClock,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly retrieval: RetrievalService,
    private readonly graph: GraphContextService,
  ) {
    this.tuning = config.retrieval.thinking;
  }

  async retrieve(req: RetrievalRequest): Promise<{ ranked: RankedChunk[]; queryKeys: string[] }> {
    // Independent steps run together: the query's entities and their neighbours while the base retrieval runs,
    // then the top hits' entities.
    const clock = this.queryClock;
    const queryKeysP = clock.timed('graph.query_entities', 1, () => this.graph.queryEntities(req.databaseId, req.query));
    const neighboursP = queryKeysP.then((keys) => clock.timed('thinking.neighbours', 1, () => this.graph.neighbours(req.databaseId, keys, this.tuning.neighbours)));
    neighboursP.catch(() => undefined); // awaited below
    const base = await this.retrieval.retrieve({ ...req, limit: wideLimit(this.tuning, req.limit) });
    const top = base.slice(0, this.tuning.topHits).map((r) => ({ itemKey: r.item.item_key, chunkIndex: chunkIndexOf(r.candidate.chunkId) }));
    const [queryKeys, neighbours, hitEntityMap] = await Promise.all([queryKeysP, neighboursP, clock.timed('thinking.hit_entities', 1, () => this.graph.chunkEntities(req.databaseId, top))]);
    // A top hit's entities count only when another top hit shares them: an entity only one hit mentions would
    // just reinforce that hit (and rank any item with a name above a better lexical match that has none).
    const hitCounts = new Map<string, number>();
    for (const keys of hitEntityMap.values()) for (const k of new Set(keys)) hitCounts.set(k, (hitCounts.get(k) ?? 0) + 1);
    const hitEntities = [...hitCounts].filter(([, n]) => n >= 2).map(([k]) => k);
    const weights = new Map<string, number>();
    for (const k of hitEntities) weights.set(k, this.tuning.hitEntity);
    for (const k of neighbours) weights.set(k, Math.max(weights.get(k) ?? 0, this.tuning.neighbour));
    for (const k of queryKeys) weights.set(k, this.tuning.queryEntity);
    const expansion = await clock.timed('thinking.expansion', 1, () => this.graph.chunksMentioning(req.databaseId, weights, { collections: req.collections, stores: req.stores }, this.tuning.expansion, this.tuning.maxEntityChunks));
    const graphScore = new Map(expansion.map((e) => [`${e.itemKey}:${e.chunkIndex}`, e.score]));

    // Every candidate's vector, to score old and new candidates alike.
    const candidates = new Map<string, { candidate: LeanCandidate; item: RankedChunk['item']; keyword: number }>();
    for (const r of base) candidates.set(r.candidate.chunkId, { candidate: r.candidate, item: r.item, keyword: r.keyword });
    // `and` and `phrase` promise keyword matches: the graph then re-ranks the matching hits but brings in none of its own.
    const widens = (req.operator ?? 'or') === 'or';
    const newKeys = widens ? [...new Set(expansion.filter((e) => !candidates.has(`${e.itemKey}:${e.chunkIndex}`)).map((e) => e.itemKey))] : [];
    // The query vector comes from the retrieval's in-process cache (the base retrieval embedded the same text).
    const [newItems, queryVector] = await Promise.all([this.retrieval.items(req.databaseId, newKeys), req.alpha > 0 ? this.retrieval.embedQuery(req.vectorText) : null]);
    const vectors = new Map<string, Float32Array>();
    const now = Date.now();
    // The candidates already held need only their vectors (and none when alpha is 0 or the index's vectors are of
    // another model); the chunks the graph brings need their whole documents.
    const perStore = await Promise.all(
      req.stores.map(async (store) => {
        const ref = await this.catalog.entry(req.databaseId, store as Store);
        if (!ref) return { docs: [], held: [], vectorsFit: false };
        const index = ref.name;
        const vectorsFit = queryVector !== null && this.retrieval.queryVectorsFit(ref);
        const known = vectorsFit ? base.filter((r) => r.item.store === store).map((r) => r.candidate.chunkId) : [];
        const fresh = expansion.filter((e) => newItems.get(e.itemKey)?.store === store && !candidates.has(`${e.itemKey}:${e.chunkIndex}`)).map((e) => `${e.itemKey}:${e.chunkIndex}`);
        const [held, docs] = await clock.timed(`thinking.vectors.${store}`, 1, () =>
          Promise.all([known.length ? this.searchIndex.getVectors(index, known) : [], fresh.length ? this.searchIndex.getChunks(index, fresh) : []]),
        );
        return { docs, held, vectorsFit };
      }),
    );
    for (const { docs, held, vectorsFit } of perStore) {
      for (const { chunkId, vector } of held) vectors.set(chunkId, vector);
      for (const doc of docs) {
        if (vectorsFit) vectors.set(doc.chunkId, doc.vector as Float32Array);
        if (!candidates.has(doc.chunkId)) {
          const item = newItems.get(doc.itemId);
          const candidate = asCandidate(doc);
          if (item && this.retrieval.servable(item, candidate, req.caller, now) && matchesFilters(item, req.metadata, req.additionalMetadata) && (req.includeApps || !doc.isApp) && appsAllowed(item, req)) {
            candidates.set(doc.chunkId, { candidate, item, keyword: 0 });
          }
        }
      }
    }
    const cos = new Map([...candidates.keys()].map((id) => [id, queryVector && vectors.has(id) ? dot(queryVector, vectors.get(id)!) : 0]));
    const lo = Math.min(...cos.values());
    const hi = Math.max(...cos.values());
    const lexical = new Map(
      [...candidates.entries()].map(([id, c]) => {
        const vector = !queryVector ? 0 : hi - lo > 1e-12 ? (cos.get(id)! - lo) / (hi - lo) : 1;
        return [id, { vector, score: req.alpha * vector + (1 - req.alpha) * c.keyword }];
      }),
    );
    // Weighted reciprocal-rank fusion of the lexical ranking and the graph ranking: robust to their scales.
    const byId = (a: [string, number], b: [string, number]) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1);
    const lexRank = new Map([...lexical.entries()].map(([id, l]) => [id, l.score] as [string, number]).sort(byId).map(([id], i) => [id, i + 1]));
    const graphRank = new Map([...graphScore.entries()].filter(([id]) => candidates.has(id)).sort(byId).map(([id], i) => [id, i + 1]));
    const best = (1 + this.tuning.graphWeight) / (this.tuning.rrfK + 1);
    const ranked: RankedChunk[] = [...candidates.entries()].map(([id, c]) => {
      const g = graphRank.get(id);
      const fused = (1 / (this.tuning.rrfK + lexRank.get(id)!) + (g ? this.tuning.graphWeight / (this.tuning.rrfK + g) : 0)) / best;
      const score = applyRecency(fused, now - new Date(c.item.updated_at).getTime(), req.recencyBias);
      return { candidate: c.candidate, item: c.item, score, keyword: c.keyword, vector: lexical.get(id)!.vector };
    });
    ranked.sort((a, b) => b.score - a.score || (a.candidate.chunkId < b.candidate.chunkId ? -1 : 1));
    return { ranked: ranked.slice(0, req.limit), queryKeys };
  }

  /**
   * Forceful relations: memories linked by `relations.ids` to a returned memory, in the same store and collection
   * only (a link to a knowledge id yields nothing), each checked like any hit (status, expiry, ACL, `query_apps`).
   */
  async linked(req: RetrievalRequest, results: RankedChunk[]): Promise<Map<string, RankedChunk[]>> {
    const out = new Map<string, RankedChunk[]>();
    const now = Date.now();
    for (const r of results) {
      const ids = (r.item.relations ?? []).filter((id) => id !== r.item.item_id);
      if (!ids.length) continue;
      const rows = await itemKeysWithIds(this.ds, req.databaseId, r.item.collection, r.item.store, ids);
      const items = await this.retrieval.items(req.databaseId, rows.map((x) => x.item_key));
      const index = await this.catalog.indexName(req.databaseId, r.item.store);
      if (!index || !items.size) continue;
      const docs = await this.searchIndex.listChunks(index, { filter: { itemIds: [...items.keys()] }, limit: 50 });
      const linked: RankedChunk[] = [];
      for (const doc of docs) {
        const item = items.get(doc.itemId)!;
        const candidate = asCandidate(doc);
        if (this.retrieval.servable(item, candidate, req.caller, now) && appsAllowed(item, req)) linked.push({ candidate, item, score: 0, keyword: 0, vector: 0 });
      }
      if (linked.length) out.set(r.candidate.chunkId, linked);
    }
    return out;
  }
}

function asCandidate(doc: ChunkDoc): Candidate {
  const { vector: _v, ...rest } = doc;
  return { chunkId: doc.chunkId, itemId: doc.itemId, score: 0, doc: rest };
}
