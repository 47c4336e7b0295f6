/** Small vector arithmetic shared by the embedders. Everything here is deterministic (IEEE +, *, /, sqrt only). */

/** Scales `v` to unit length in place; a zero vector stays zero. Returns `v`. */
export function normalizeInPlace(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  if (sum === 0) return v;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] *= inv;
  return v;
}

export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`dot: length ${a.length} != ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}

export function isZero(v: Float32Array): boolean {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) return false;
  return true;
}

const emptyVectors = new Map<number, Float32Array>();

/**
 * The vector every embedder returns for an empty text: a fixed pseudo-random unit vector.
 * Not zero, because cosine indices (Elasticsearch `dense_vector`, LanceDB) reject or NaN on zero vectors;
 * pseudo-random, so its similarity to real texts is close to 0 rather than favouring one dimension.
 * A copy is returned each time, so callers may mutate it.
 */
export function emptyTextVector(dimensions: number): Float32Array {
  let cached = emptyVectors.get(dimensions);
  if (!cached) {
    cached = new Float32Array(dimensions);
    let state = 0x9e3779b9 ^ dimensions;
    for (let i = 0; i < dimensions; i++) {
      // xorshift32: integer-only, identical on every machine
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      cached[i] = ((state >>> 0) / 0xffffffff) * 2 - 1;
    }
    normalizeInPlace(cached);
    emptyVectors.set(dimensions, cached);
  }
  return Float32Array.from(cached);
}
