/** Percentile by nearest rank on a copy (p in [0, 100]). */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);

/** Summary of latencies; safe for any count (a spread into Math.max overflows the stack past ~120k values: a fast floor run). */
export function latencySummary(ms: number[]) {
  return { n: ms.length, mean: round(mean(ms), 2), p50: round(percentile(ms, 50), 2), p95: round(percentile(ms, 95), 2), p99: round(percentile(ms, 99), 2), max: round(ms.reduce((a, b) => (b > a ? b : a), -Infinity), 2) };
}

export const round = (x: number, digits = 4) => (Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : x);

/** The ranked ids with repeats removed (a document may come back as several chunks: its best chunk ranks it). */
export function distinctIds(ids: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const id of ids) if (!seen.has(id)) (seen.add(id), out.push(id));
  return out;
}

/**
 * nDCG@k with graded relevance (`relevant` id → gain), exponential-free gain as in trec_eval's ndcg_cut
 * (gain = relevance), log2 discount, ideal from the judged relevant documents.
 */
export function ndcgAtK(ranked: string[], relevant: Map<string, number>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    const gain = relevant.get(id) ?? 0;
    if (gain > 0) dcg += gain / Math.log2(i + 2);
  });
  const ideal = [...relevant.values()].filter((g) => g > 0).sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((acc, g, i) => acc + g / Math.log2(i + 2), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

/** |relevant ∩ top-k| / |relevant|; 1 when nothing is relevant (the LoCoMo convention for questions without evidence). */
export function recallAtK(ranked: string[], relevant: Set<string>, k: number): number {
  if (relevant.size === 0) return 1;
  const top = new Set(ranked.slice(0, k));
  let hit = 0;
  for (const id of relevant) if (top.has(id)) hit++;
  return hit / relevant.size;
}

/**
 * nDCG@k with binary relevance as LongMemEval's own evaluation computes it (src/retrieval/eval_utils.py): its DCG
 * does not discount the first rank and divides rank i ≥ 2 by log2(i), so ranks 1 and 2 both count fully (trec_eval's
 * form, `ndcgAtK`, divides rank i by log2(i + 1)). The ideal ranking puts every relevant unit first.
 */
export function ndcgAtKFirstTwoFull(ranked: string[], relevant: Set<string>, k: number): number {
  const dcg = (gains: number[]) => gains.slice(0, k).reduce((acc, g, i) => acc + (i === 0 ? g : g / Math.log2(i + 1)), 0);
  const ideal = dcg(Array.from({ length: Math.min(k, relevant.size) }, () => 1));
  return ideal > 0 ? dcg(ranked.slice(0, k).map((id) => (relevant.has(id) ? 1 : 0))) / ideal : 0;
}

/** 1 when any relevant unit is in the top k (LongMemEval's recall_any@k). */
export const recallAnyAtK = (ranked: string[], relevant: Set<string>, k: number) => (ranked.slice(0, k).some((id) => relevant.has(id)) ? 1 : 0);

/** 1 when every relevant unit is in the top k (LongMemEval's recall_all@k). */
export function recallAllAtK(ranked: string[], relevant: Set<string>, k: number): number {
  const top = new Set(ranked.slice(0, k));
  return [...relevant].every((id) => top.has(id)) ? 1 : 0;
}
