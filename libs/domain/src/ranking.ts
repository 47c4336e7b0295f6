/**
 * Fusion and ranking of search candidates, shared by every engine (the engines only provide candidates).
 *
 * Relative-score fusion: each list's scores are min-max normalized to [0, 1] (a list with one distinct score
 * maps to 1), then combined as alpha * vector + (1 - alpha) * keyword; a candidate missing from a list gets 0
 * there. alpha = 1 is pure vector search, 0 pure keyword search.
 * Recency bias r in [0, 1] blends in freshness: score * (1 - r) + r * 0.5^(age_days / halfLifeDays).
 */
export interface Scored {
  id: string;
  score: number;
}

export interface FusedScore {
  id: string;
  score: number;
  keyword: number;
  vector: number;
}

function normalize(list: Scored[]): Map<string, number> {
  const out = new Map<string, number>();
  if (!list.length) return out;
  let min = Infinity;
  let max = -Infinity;
  for (const c of list) {
    min = Math.min(min, c.score);
    max = Math.max(max, c.score);
  }
  const span = max - min;
  for (const c of list) {
    const v = span > 1e-12 ? (c.score - min) / span : 1;
    out.set(c.id, Math.max(out.get(c.id) ?? 0, v));
  }
  return out;
}

export function fuseScores(keyword: Scored[], vector: Scored[], alpha: number): FusedScore[] {
  const kw = normalize(keyword);
  const vec = normalize(vector);
  const ids = new Set([...kw.keys(), ...vec.keys()]);
  const out: FusedScore[] = [];
  for (const id of ids) {
    const k = kw.get(id) ?? 0;
    const v = vec.get(id) ?? 0;
    out.push({ id, keyword: k, vector: v, score: alpha * v + (1 - alpha) * k });
  }
  return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function applyRecency(score: number, ageMs: number, bias: number, halfLifeDays = 30): number {
  if (bias <= 0) return score;
  const freshness = Math.pow(0.5, Math.max(0, ageMs) / (halfLifeDays * 86_400_000));
  return score * (1 - bias) + bias * freshness;
}
