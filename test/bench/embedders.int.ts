import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { embeddersMarkdown, loadEmbedder, measureLocomo, measureScifact } from '@crs/bench/embedders/run-embedders';
import { runEnvironment } from '@crs/bench/lib/env';
import { DEFAULT_DATA_DIR, loadLocomo, loadScifact } from '@crs/bench/quality/datasets';
import { GloveSifEmbedder } from '@crs/embeddings';

/**
 * Smoke run of the in-process embedder benchmark (not a measurement: nothing here asserts a score or a time beyond
 * its range): GloVe-SIF on 20 SciFact documents with 5 queries and a slice of one LoCoMo conversation, then the report.
 */
const haveData = existsSync(join(DEFAULT_DATA_DIR, 'scifact/corpus.jsonl')) && existsSync(join(DEFAULT_DATA_DIR, 'locomo/locomo-dev.json'));
if (!haveData) console.log(`bench embedders smoke skipped: no benchmark data under ${DEFAULT_DATA_DIR}`);

(haveData ? describe : describe.skip)('embedder benchmark harness (smoke)', () => {
  jest.setTimeout(60_000);

  it('embeds, ranks by cosine, scores and reports', async () => {
    const embedder = new GloveSifEmbedder();
    const loadMs = await loadEmbedder(embedder);
    const scifact = loadScifact(DEFAULT_DATA_DIR, { docs: 20, queries: 5 });
    const locomo = loadLocomo(DEFAULT_DATA_DIR, { conversations: 1, turns: 30, questions: 8 });

    const sf = await measureScifact(embedder, scifact, { batch: 8, quality: true });
    expect(sf.texts).toBeGreaterThanOrEqual(20);
    expect(sf.textsPerSecond).toBeGreaterThan(0);
    expect(sf.quality!['nDCG@10']).toBeGreaterThanOrEqual(0);
    expect(sf.quality!['nDCG@10']).toBeLessThanOrEqual(1);
    // every relevant document is among the 20, so all of them are within the top 100
    expect(sf.quality!['R@100']).toBe(1);

    const lc = await measureLocomo(embedder, locomo, { batch: 8, quality: true });
    expect(lc.texts).toBe(30);
    expect(lc.quality!['R@50']).toBe(100); // 30 turns: the top 50 is every turn
    expect(lc.quality!['R@5']).toBeLessThanOrEqual(lc.quality!['R@10']);

    const throughputOnly = await measureLocomo(embedder, locomo, { batch: 8, quality: false });
    expect(throughputOnly.quality).toBeUndefined();

    const md = embeddersMarkdown({
      environment: runEnvironment(),
      batch: 8,
      limit: null,
      runs: [{ provider: 'glove', modelId: embedder.modelId, dimensions: embedder.dimensions, loadMs, results: [sf, lc] }],
    });
    expect(md).toContain('| glove | `glove-sif-100d-v1` | 100 |');
    expect(md).toContain('nDCG@10');
  });
});
