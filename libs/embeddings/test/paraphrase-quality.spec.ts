import type { Embedder } from '../src/embedder.port';
import { GloveSifEmbedder } from '../src/glove-sif.embedder';
import { TrigramHashingEmbedder } from '../src/trigram-hashing';
import { dot } from '../src/unit-vector';
import { PARAPHRASE_TRIPLETS } from './paraphrase-triplets';

/**
 * Qualitative check that the GloVe-SIF embedder captures meaning beyond shared character trigrams.
 * Figures (printed) for the lead's report; the assertions only compare the two embedders.
 */
interface ParaphraseScores {
  /** Mean cosine of anchor vs paraphrase. */
  meanParaphrase: number;
  /** Mean cosine of anchor vs non-paraphrase (hard negatives: they share words with the anchor). */
  meanNonParaphrase: number;
  /** Share of triplets where the paraphrase scores above the non-paraphrase. */
  tripletAccuracy: number;
  /** Probability that a random paraphrase pair scores above a random non-paraphrase pair (ROC AUC). */
  pairAuc: number;
  /** Share of (anchor, other triplet's paraphrase) where the anchor's own paraphrase scores higher (easy negatives). */
  easyNegativeAccuracy: number;
}

async function scoreParaphrases(embedder: Embedder): Promise<ParaphraseScores> {
  const n = PARAPHRASE_TRIPLETS.length;
  const vectors = await embedder.embed(PARAPHRASE_TRIPLETS.flatMap((t) => [t.anchor, t.paraphrase, t.nonParaphrase]));
  const anchor = (i: number) => vectors[3 * i];
  const paraphrase = (i: number) => vectors[3 * i + 1];
  const nonParaphrase = (i: number) => vectors[3 * i + 2];
  const positives = PARAPHRASE_TRIPLETS.map((_, i) => dot(anchor(i), paraphrase(i)));
  const negatives = PARAPHRASE_TRIPLETS.map((_, i) => dot(anchor(i), nonParaphrase(i)));
  let auc = 0;
  for (const p of positives) for (const q of negatives) auc += p > q ? 1 : p === q ? 0.5 : 0;
  let easyWins = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j && positives[i] > dot(anchor(i), paraphrase(j))) easyWins++;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    meanParaphrase: mean(positives),
    meanNonParaphrase: mean(negatives),
    tripletAccuracy: positives.filter((p, i) => p > negatives[i]).length / n,
    pairAuc: auc / (n * n),
    easyNegativeAccuracy: easyWins / (n * (n - 1)),
  };
}

describe('paraphrase separation: GloVe-SIF vs trigram hashing', () => {
  it(`separates paraphrases from non-paraphrases better than hashing (${PARAPHRASE_TRIPLETS.length} triplets)`, async () => {
    const glove = await scoreParaphrases(new GloveSifEmbedder());
    const hashing100 = await scoreParaphrases(new TrigramHashingEmbedder(100));
    const hashing256 = await scoreParaphrases(new TrigramHashingEmbedder(256));
    const row = (s: ParaphraseScores) =>
      Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Math.round(v * 1000) / 1000]));
    console.info('paraphrase scores', { 'glove-sif-100d': row(glove), 'trigram-hash-100d': row(hashing100), 'trigram-hash-256d': row(hashing256) });

    for (const hashing of [hashing100, hashing256]) {
      expect(glove.tripletAccuracy).toBeGreaterThan(hashing.tripletAccuracy);
      expect(glove.pairAuc).toBeGreaterThan(hashing.pairAuc);
      expect(glove.easyNegativeAccuracy).toBeGreaterThan(hashing.easyNegativeAccuracy);
      expect(glove.meanParaphrase - glove.meanNonParaphrase).toBeGreaterThan(hashing.meanParaphrase - hashing.meanNonParaphrase);
    }
    // Better than chance on its own, not just better than a weak baseline.
    expect(glove.tripletAccuracy).toBeGreaterThan(0.6);
    expect(glove.easyNegativeAccuracy).toBeGreaterThan(0.9);
  });
});
