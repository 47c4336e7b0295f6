import type { Embedder } from '@crs/embeddings/embedder.port';
import { dot } from '@crs/embeddings/unit-vector';

export interface EmbedderContractOptions {
  /** Makes a fresh embedder; called more than once (determinism across instances). */
  create: () => Embedder | Promise<Embedder>;
  /** Absolute tolerance when comparing vectors of the same text (0 = bit-identical). */
  tolerance?: number;
  /** Per-test timeout in ms. */
  timeoutMs?: number;
}

/**
 * The Embedder port contract, run against every adapter (test/integration/embedder.int.ts).
 * Written against the port only: dimensions, unit length, determinism, empty texts, order within a batch.
 */
export function describeEmbedderContract(name: string, options: EmbedderContractOptions): void {
  const tolerance = options.tolerance ?? 0;
  const timeout = options.timeoutMs ?? 30_000;

  const texts = [
    'The quarterly revenue report is due on Friday.',
    'A cat sleeps on the warm windowsill.',
    'Reset your password from the account settings page.',
    'INV-2024-00042 was paid by Acme GmbH.',
    'naïve café résumé — ünïcödé',
  ];

  const expectClose = (a: Float32Array, b: Float32Array) => {
    expect(a.length).toBe(b.length);
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
    expect(worst).toBeLessThanOrEqual(tolerance);
  };

  describe(`Embedder contract: ${name}`, () => {
    let embedder: Embedder;

    beforeAll(async () => {
      embedder = await options.create();
    }, timeout * 2);

    it('names its vector space and dimensions', () => {
      expect(embedder.modelId).toMatch(/\S/);
      expect(Number.isInteger(embedder.dimensions)).toBe(true);
      expect(embedder.dimensions).toBeGreaterThan(0);
    });

    it('returns nothing for no texts', async () => {
      expect(await embedder.embed([])).toEqual([]);
    }, timeout);

    it('returns one unit vector of the declared dimensions per text', async () => {
      const vectors = await embedder.embed(texts);
      expect(vectors).toHaveLength(texts.length);
      for (const v of vectors) {
        expect(v).toBeInstanceOf(Float32Array);
        expect(v.length).toBe(embedder.dimensions);
        expect(v.every(Number.isFinite)).toBe(true);
        expect(Math.abs(Math.sqrt(dot(v, v)) - 1)).toBeLessThan(1e-4);
      }
    }, timeout);

    it('gives different texts different vectors', async () => {
      const [a, b] = await embedder.embed([texts[0], texts[1]]);
      expect(dot(a, b)).toBeLessThan(0.99);
    }, timeout);

    it('is deterministic across calls and instances', async () => {
      const first = await embedder.embed(texts);
      const again = await embedder.embed(texts);
      const other = await (await options.create()).embed(texts);
      first.forEach((v, i) => {
        expectClose(v, again[i]);
        expectClose(v, other[i]);
      });
    }, timeout);

    it('handles empty and blank texts with a unit vector, without disturbing the rest of the batch', async () => {
      const [empty, blank, real] = await embedder.embed(['', '  \n\t ', texts[2]]);
      for (const v of [empty, blank]) {
        expect(v.length).toBe(embedder.dimensions);
        expect(Math.abs(Math.sqrt(dot(v, v)) - 1)).toBeLessThan(1e-4);
      }
      expectClose(real, (await embedder.embed([texts[2]]))[0]);
    }, timeout);

    it('keeps batch order: each vector matches the text at its position', async () => {
      const many = Array.from({ length: 100 }, (_, i) => `${texts[i % texts.length]} (item ${i})`);
      const forwards = await embedder.embed(many);
      const backwards = await embedder.embed([...many].reverse());
      expect(forwards).toHaveLength(many.length);
      forwards.forEach((v, i) => expectClose(v, backwards[many.length - 1 - i]));
      for (const i of [0, 37, 64, 99]) expectClose(forwards[i], (await embedder.embed([many[i]]))[0]);
    }, timeout * 2);

    it('embeds a repeated text identically within one batch', async () => {
      const [a, b] = await embedder.embed([texts[3], texts[3]]);
      expectClose(a, b);
    }, timeout);
  });
}
