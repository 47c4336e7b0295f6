/**
 * Retrieval quality from users' own feedback: the recorded results of each query scored against the
 * `ground_truth.source_ids` submitted for it. Pure; the CLI (`crs feedback report`) feeds it.
 */
export const EVALUATION_CUTOFFS = [1, 3, 5, 10] as const;

export interface JudgedQuery {
  requestId: string;
  /** item ids of the recorded results in rank order (one per chunk, so ids may repeat) */
  retrieved: string[];
  /** every ground-truth source id submitted for this query (all its feedback, united) */
  relevant: string[];
}

export interface QueryScore {
  requestId: string;
  relevant: number;
  /** 1-based rank of the first relevant item among distinct retrieved items; null when none was retrieved */
  firstRelevantRank: number | null;
  recallAt: Record<number, number>;
  reciprocalRank: number;
}

export interface EvaluationSummary {
  /** queries with at least one ground-truth source id */
  queries: number;
  /** mean recall@k over those queries */
  recallAt: Record<number, number>;
  /** mean reciprocal rank of the first relevant item (0 for a query where none was retrieved) */
  mrr: number;
  perQuery: QueryScore[];
}

/** Ranked distinct item ids: a document's rank is the rank of its best chunk. */
export function distinctInOrder(ids: string[]): string[] {
  return [...new Set(ids)];
}

export function scoreQuery(q: JudgedQuery, cutoffs: readonly number[] = EVALUATION_CUTOFFS): QueryScore {
  const relevant = new Set(q.relevant);
  const ranked = distinctInOrder(q.retrieved);
  const index = ranked.findIndex((id) => relevant.has(id));
  const recallAt: Record<number, number> = {};
  for (const k of cutoffs) {
    const hits = ranked.slice(0, k).filter((id) => relevant.has(id)).length;
    recallAt[k] = relevant.size ? hits / relevant.size : 0;
  }
  return { requestId: q.requestId, relevant: relevant.size, firstRelevantRank: index < 0 ? null : index + 1, recallAt, reciprocalRank: index < 0 ? 0 : 1 / (index + 1) };
}

/** Scores every query that has ground-truth source ids; queries without any are left out. */
export function evaluateRetrieval(queries: JudgedQuery[], cutoffs: readonly number[] = EVALUATION_CUTOFFS): EvaluationSummary {
  const perQuery = queries.filter((q) => q.relevant.length > 0).map((q) => scoreQuery(q, cutoffs));
  const n = perQuery.length;
  const mean = (f: (s: QueryScore) => number) => (n ? round(perQuery.reduce((a, s) => a + f(s), 0) / n) : 0);
  const recallAt: Record<number, number> = {};
  for (const k of cutoffs) recallAt[k] = mean((s) => s.recallAt[k]);
  return { queries: n, recallAt, mrr: mean((s) => s.reciprocalRank), perQuery };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;
