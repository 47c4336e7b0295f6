import type { Embedder } from './embedder.port';
import { tokenizeEnglish } from './english-tokenizer';
import { DEFAULT_GLOVE_VOCABULARY_SIZE, loadGloveAsset, sourcePackageVersion, type GloveAsset } from './glove-asset';
import { sifWeight, zipfNormalizer } from './sif-weighting';
import { addTrigramHashVector } from './trigram-hashing';
import { emptyTextVector, isZero, normalizeInPlace } from './unit-vector';

export interface GloveSifEmbedderOptions {
  /** Where the compact GloVe asset is cached. Default: `node_modules/.cache/crs-embeddings`. */
  cacheDir?: string;
  /** Vocabulary kept in the asset (most frequent words). Default 50 000; other sizes get another model id. */
  vocabularySize?: number;
}

const DIMENSIONS = 100;
/** The source package version the `v1` space was defined with; another version gets a suffixed model id. */
const V1_SOURCE_VERSION = '1.1.0';

/**
 * Offline default embedder: SIF-weighted average of 100-d GloVe word vectors, minus a fixed common component.
 *
 * sentence = normalize(P⊥ sum_w s_w v_w), where
 * - words come from tokenizeEnglish (lowercase, Unicode letters/digits);
 * - v_w is the word's GloVe vector (int8-dequantized) and s_w = a / (a + p(w)) with p(w) from Zipf on its rank;
 * - a word outside the vocabulary gets its character-trigram hash vector (trigram-hashing.ts) scaled to the
 *   vocabulary's mean vector norm, with the weight of the rarest source word (about 1, the maximum): unknown
 *   words are rare words, and names, ids and codes are exactly what a query means when it contains them;
 *   the same unknown word or a one-letter typo of it maps to the same or a close direction;
 * - P⊥ removes the common component stored in the asset (see glove-asset.ts), computed without a corpus.
 *
 * Deterministic: fixed asset bytes, fixed summation order, float32 accumulation.
 */
export class GloveSifEmbedder implements Embedder {
  readonly dimensions = DIMENSIONS;
  /** A table look-up and a weighted sum per text. */
  readonly inProcessFast = true;
  readonly modelId: string;
  private model?: Promise<LoadedModel>;

  constructor(private readonly options: GloveSifEmbedderOptions = {}) {
    const vocabularySize = options.vocabularySize ?? DEFAULT_GLOVE_VOCABULARY_SIZE;
    const sourceVersion = sourcePackageVersion();
    this.modelId =
      'glove-sif-100d-v1' +
      (vocabularySize === DEFAULT_GLOVE_VOCABULARY_SIZE ? '' : `-${vocabularySize}w`) +
      (sourceVersion === V1_SOURCE_VERSION ? '' : `-wink${sourceVersion}`);
  }

  /** Loads the asset (building and caching it on first use anywhere). embed() calls this itself. */
  async load(): Promise<void> {
    await this.loaded();
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const model = await this.loaded();
    return texts.map((text) => this.embedOne(model, text));
  }

  private loaded(): Promise<LoadedModel> {
    if (!this.model) {
      this.model = loadGloveAsset(this.options).then(prepare);
      this.model.catch(() => (this.model = undefined));
    }
    return this.model;
  }

  private embedOne(model: LoadedModel, text: string): Float32Array {
    const { asset, weights, oovWeight } = model;
    const d = DIMENSIONS;
    const sum = new Float32Array(d);
    let words = 0;
    for (const token of tokenizeEnglish(text)) {
      words++;
      const i = asset.index.get(token);
      if (i === undefined) {
        addTrigramHashVector(token, sum, oovWeight);
        continue;
      }
      const scale = weights[i] * asset.scales[i];
      const offset = i * d;
      for (let j = 0; j < d; j++) sum[j] += scale * asset.vectors[offset + j];
    }
    if (words === 0) return emptyTextVector(d);
    const pc = asset.commonComponent;
    let projection = 0;
    for (let j = 0; j < d; j++) projection += sum[j] * pc[j];
    for (let j = 0; j < d; j++) sum[j] -= projection * pc[j];
    if (isZero(sum)) return emptyTextVector(d);
    return normalizeInPlace(sum);
  }
}

interface LoadedModel {
  asset: GloveAsset;
  /** SIF weight of each asset word. */
  weights: Float32Array;
  /** SIF weight of an out-of-vocabulary word times the mean vector norm (hash vectors are unit length). */
  oovWeight: number;
}

function prepare(asset: GloveAsset): LoadedModel {
  if (asset.dimensions !== DIMENSIONS) throw new Error(`GloVe asset has ${asset.dimensions} dimensions, expected ${DIMENSIONS}`);
  const normalizer = zipfNormalizer(asset.sourceVocabularySize);
  const weights = new Float32Array(asset.words.length);
  for (let i = 0; i < weights.length; i++) weights[i] = sifWeight(asset.ranks[i], normalizer);
  const oovWeight = sifWeight(asset.sourceVocabularySize, normalizer) * asset.meanNorm;
  return { asset, weights, oovWeight };
}
