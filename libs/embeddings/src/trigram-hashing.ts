import type { Embedder } from './embedder.port';
import { tokenizeEnglish } from './english-tokenizer';
import { emptyTextVector, normalizeInPlace } from './unit-vector';

/**
 * Character-trigram feature hashing: a deterministic vector for any word, vocabulary or not.
 *
 * A word is padded as `#word#`; each trigram (by code point) and the whole padded word are hashed
 * (FNV-1a over UTF-16 code units, then a murmur3 finalizer) into two (slot, sign) pairs each.
 * Words sharing most trigrams (typos, inflections, ids differing in one character) get close vectors.
 * Integer arithmetic only, so the result is identical on every machine.
 */
export function addTrigramHashVector(word: string, target: Float32Array, weight = 1): void {
  const features = trigramFeatures(word);
  const scratch = new Float32Array(target.length);
  for (const feature of features) {
    const h1 = fmix32(fnv1a(feature));
    const h2 = fmix32(h1 ^ 0x5bd1e995);
    scratch[h1 % target.length] += h1 & 0x80000000 ? -1 : 1;
    scratch[h2 % target.length] += h2 & 0x80000000 ? -1 : 1;
  }
  normalizeInPlace(scratch);
  for (let i = 0; i < target.length; i++) target[i] += weight * scratch[i];
}

/** The unit trigram-hash vector of one word. */
export function trigramHashVector(word: string, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  addTrigramHashVector(word, v);
  return v;
}

function trigramFeatures(word: string): string[] {
  const chars = Array.from(`#${word}#`);
  const features = [chars.join('')];
  for (let i = 0; i + 3 <= chars.length; i++) features.push(chars[i] + chars[i + 1] + chars[i + 2]);
  return features;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Baseline embedder with no vocabulary: the average of the words' trigram-hash vectors.
 * Kept as the yardstick GloveSifEmbedder is measured against, and as a tiny, instant embedder for tests.
 */
export class TrigramHashingEmbedder implements Embedder {
  readonly modelId: string;

  constructor(readonly dimensions = 256) {
    this.modelId = `trigram-hash-${dimensions}d-v1`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      const tokens = tokenizeEnglish(text);
      if (tokens.length === 0) return emptyTextVector(this.dimensions);
      const v = new Float32Array(this.dimensions);
      for (const token of tokens) addTrigramHashVector(token, v);
      return normalizeInPlace(v);
    });
  }
}
