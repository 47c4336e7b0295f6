import { fuseScores, type FusedScore } from '@crs/domain/ranking';
import type { Embedder } from '@crs/embeddings/embedder.port';
import { dot } from '@crs/embeddings/unit-vector';
import { chunkText } from '@crs/ingestion/chunking/chunk-text';
import type { LeanCandidate, SearchIndex } from '@crs/search/search-index.port';
import { candidatePool, POOL_DEFAULTS } from '@crs/domain/retrieval/pool-size';
import { distinctIds, mean, ndcgAtK, round } from '../lib/stats';
import type { Scifact, ScifactQuery } from './datasets';

/**
 * Offline replay of fast-mode retrieval on SciFact, for ranking experiments on the dev (train) queries in seconds
 * instead of a service run: the service's chunker, embedder, LanceDB index class, candidate pool and fusion
 * (`fuseScores`), without HTTP, Postgres or the read-model checks (which change nothing on SciFact: every item is
 * completed, unrestricted and unexpired). The knowledge store has no conversation context, so SciFact's fast hybrid
 * is exactly this. A variant re-scores the fused candidates before the top 10 are taken.
 */

export const REPLAY_INDEX = 'replay_scifact';
const COLLECTION = 'default';
const RESULTS = 10;

export interface ReplayQuery {
  query: ScifactQuery;
  vector: Float32Array;
  keyword: LeanCandidate[];
  vectorHits: LeanCandidate[];
}

export interface ReplayContext {
  index: SearchIndex;
  embedder: Embedder;
  indexName: string;
}

/** Creates the index (once) with every document chunked and embedded as the indexing pipeline does. */
export async function buildReplayIndex(index: SearchIndex, embedder: Embedder, data: Scifact, chunkTokens: number): Promise<number> {
  if (await index.indexExists(REPLAY_INDEX)) return index.count(REPLAY_INDEX);
  await index.createIndex(REPLAY_INDEX, { dimensions: embedder.dimensions });
  let chunks = 0;
  const batch = 200;
  for (let s = 0; s < data.docs.length; s += batch) {
    const docs = data.docs.slice(s, s + batch).flatMap((d) => chunkText(d.text, { title: d.title || null, maxTokens: chunkTokens }).map((c) => ({ d, c })));
    const vectors = await embedder.embed(docs.map(({ c }) => c.text));
    await index.upsert(
      REPLAY_INDEX,
      docs.map(({ d, c }, i) => ({
        chunkId: `${d.id}:${c.index}`,
        itemId: d.id,
        store: 'knowledge' as const,
        collection: COLLECTION,
        title: d.title || null,
        text: c.text,
        vector: vectors[i],
        principals: null,
        metadata: {},
        additionalMetadata: {},
        sourceType: 'app',
        isApp: true,
        createdAt: 0,
        updatedAt: 0,
        expiresAt: null,
        version: 1,
      })),
    );
    chunks += docs.length;
  }
  await index.optimize(REPLAY_INDEX);
  return chunks;
}

/** Each query's keyword and vector candidates, as the service asks for them for `max_results: 10`. */
export async function replayCandidates(index: SearchIndex, embedder: Embedder, queries: ScifactQuery[]): Promise<ReplayQuery[]> {
  const pool = candidatePool(POOL_DEFAULTS, RESULTS);
  const vectors = await embedder.embed(queries.map((q) => q.text));
  const filter = { stores: ['knowledge' as const], collections: [COLLECTION], now: Date.now() };
  const out: ReplayQuery[] = [];
  for (const [i, query] of queries.entries()) {
    const [keyword, vectorHits] = await Promise.all([
      index.keywordSearch(REPLAY_INDEX, query.text, { limit: pool, filter, fields: 'lean' }),
      index.vectorSearch(REPLAY_INDEX, vectors[i], { limit: pool, filter, fields: 'lean' }),
    ]);
    out.push({ query, vector: vectors[i], keyword, vectorHits });
  }
  return out;
}

/** Re-scores fused candidates in place (their `score`); `prepare` runs once before the queries. */
export interface ReplayVariant {
  name: string;
  prepare?(ctx: ReplayContext, queries: ReplayQuery[]): Promise<void>;
  rescore?(q: ReplayQuery, fused: FusedScore[], alpha: number): void;
}

/** The top 10 chunks' distinct documents, as the quality benchmark scores a `max_results: 10` answer. */
export function rankQuery(q: ReplayQuery, alpha: number, variant?: ReplayVariant): string[] {
  const fused = fuseScores(
    q.keyword.map((c) => ({ id: c.chunkId, score: c.score })),
    q.vectorHits.map((c) => ({ id: c.chunkId, score: c.score })),
    alpha,
  );
  variant?.rescore?.(q, fused, alpha);
  fused.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const itemOf = new Map([...q.keyword, ...q.vectorHits].map((c) => [c.chunkId, c.itemId]));
  return distinctIds(fused.slice(0, RESULTS).map((f) => itemOf.get(f.id)!));
}

export function replayNdcg(queries: ReplayQuery[], alpha: number, variant?: ReplayVariant): number {
  return round(mean(queries.map((q) => ndcgAtK(rankQuery(q, alpha, variant), q.query.relevant, RESULTS))));
}

/** Min-max onto [0, 1] (all equal: 0), as the fusion normalizes each list. */
export function minMax(values: number[]): number[] {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return values.map((v) => (hi - lo > 1e-12 ? (v - lo) / (hi - lo) : 0));
}

/** Candidate vectors (every fused candidate's), read once for the variants that need them. */
async function candidateVectors(ctx: ReplayContext, queries: ReplayQuery[]): Promise<Map<string, Float32Array>> {
  const ids = [...new Set(queries.flatMap((q) => [...q.keyword, ...q.vectorHits].map((c) => c.chunkId)))];
  const out = new Map<string, Float32Array>();
  for (let s = 0; s < ids.length; s += 500) {
    for (const doc of await ctx.index.getChunks(ctx.indexName, ids.slice(s, s + 500))) out.set(doc.chunkId, Float32Array.from(doc.vector));
  }
  return out;
}

/**
 * Vector pseudo-relevance feedback (Rocchio on the query vector): q' = q + b × mean(top `top` fused candidates'
 * vectors); the vector part of every candidate's score becomes its min-max normalized cosine to q' over all fused
 * candidates (keyword-only candidates included, which fusion scores 0). top 1, b 0 is "exact cosine for every
 * candidate".
 */
export function vectorPrfVariant(top: number, b: number): ReplayVariant {
  let vectors = new Map<string, Float32Array>();
  return {
    name: `vector-prf top ${top}, b ${b}`,
    async prepare(ctx, queries) {
      vectors = await candidateVectors(ctx, queries);
    },
    rescore(q, fused, alpha) {
      const first = [...fused].sort((x, y) => y.score - x.score).slice(0, top);
      const qv = Float32Array.from(q.vector);
      for (const f of first) {
        const v = vectors.get(f.id)!;
        for (let i = 0; i < qv.length; i++) qv[i] += (b * v[i]) / top;
      }
      const cos = minMax(fused.map((f) => dot(qv, vectors.get(f.id)!)));
      fused.forEach((f, i) => (f.score = (1 - alpha) * f.keyword + alpha * cos[i]));
    },
  };
}

/**
 * Soft term matching with the embedder's own word vectors (in the spirit of DESM): each query word's best cosine to
 * a word of the candidate (1 for the word itself), SIF-weighted over the query's words, min-max normalized over the
 * candidates, added with weight `beta`. `similarity(queryWord, candidateWords)` is supplied by the caller.
 */
export function softMatchVariant(beta: number, tokenize: (text: string) => string[], similarity: (word: string, words: string[]) => number, weight: (word: string) => number): ReplayVariant {
  const words = new Map<string, string[]>();
  return {
    name: `soft match beta ${beta}`,
    rescore(q, fused) {
      const texts = new Map([...q.keyword, ...q.vectorHits].map((c) => [c.chunkId, c.doc.text]));
      const queryWords = [...new Set(tokenize(q.query.text))];
      const total = queryWords.reduce((s, w) => s + weight(w), 0);
      const soft = fused.map((f) => {
        let own = words.get(f.id);
        if (!own) words.set(f.id, (own = [...new Set(tokenize(texts.get(f.id)!))]));
        return total > 0 ? queryWords.reduce((s, w) => s + weight(w) * similarity(w, own!), 0) / total : 0;
      });
      const norm = minMax(soft);
      fused.forEach((f, i) => (f.score += beta * norm[i]));
    },
  };
}
