/** mulberry32: a small, fast, seeded PRNG (deterministic corpora and query sets). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)];

/** Zipf-like index in [0, n): a few values are common, most are rare (as words in real text). */
export const zipfIndex = (random: () => number, n: number, skew = 2.5) => Math.min(n - 1, Math.floor(n * random() ** skew));
