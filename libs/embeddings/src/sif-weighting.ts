/**
 * SIF weighting (Arora, Liang, Ma 2017, "A simple but tough-to-beat baseline for sentence embeddings"):
 * a word's weight is a / (a + p(w)), so frequent words count little and rare words almost fully.
 *
 * We have no corpus counts, only each word's frequency rank in the GloVe vocabulary, so p(w) is estimated
 * with Zipf's law: p(rank r, 0-based) = 1 / ((r + 1) * H_V), H_V = sum_{k=1..V} 1/k over the source vocabulary.
 * Only +, /, * are used (no Math.log), so weights are bit-identical on every machine.
 */

/**
 * The smoothing constant. 3e-4 sits inside the range the SIF paper found stable (1e-4 .. 1e-3); on our
 * paraphrase triplets (libs/embeddings/test) 1e-4 .. 1e-3 all score within one triplet of each other.
 * Changing it changes the vector space: bump the model id and the asset format.
 */
export const SIF_A = 3e-4;

export function zipfNormalizer(sourceVocabularySize: number): number {
  let h = 0;
  for (let k = 1; k <= sourceVocabularySize; k++) h += 1 / k;
  return h;
}

export function zipfProbability(rank: number, normalizer: number): number {
  return 1 / ((rank + 1) * normalizer);
}

export function sifWeight(rank: number, normalizer: number, a = SIF_A): number {
  return a / (a + zipfProbability(rank, normalizer));
}
