import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createProgress } from '@crs/bench/lib/progress';
import { runEnvironment } from '@crs/bench/lib/env';
import type { ServiceHandle } from '@crs/bench/lib/service';
import { DEFAULT_DATA_DIR, loadLocomo, loadScifact } from '@crs/bench/quality/datasets';
import { qualityMarkdown, qualityTargets, rankingDefaults, REFERENCES } from '@crs/bench/quality/report';
import { qualityConfigs, runQuality } from '@crs/bench/quality/run-quality';
import { startInProcessService } from './in-process-service';

/**
 * Smoke run of the quality benchmark harness (not a measurement: nothing here asserts a score or a time):
 * 20 SciFact documents with 5 queries and a slice of one LoCoMo conversation, through the HTTP API of an
 * in-process service, every configuration, then the report.
 */
const haveData = existsSync(join(DEFAULT_DATA_DIR, 'scifact/corpus.jsonl')) && existsSync(join(DEFAULT_DATA_DIR, 'locomo/locomo-dev.json'));
if (!haveData) console.log(`bench quality smoke skipped: no benchmark data under ${DEFAULT_DATA_DIR}`);

(haveData ? describe : describe.skip)('quality benchmark harness (smoke)', () => {
  jest.setTimeout(300_000);
  let service: ServiceHandle;

  beforeAll(async () => {
    service = await startInProcessService('bench_quality');
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('ingests, waits, queries every configuration and reports', async () => {
    const scifact = loadScifact(DEFAULT_DATA_DIR, { docs: 20, queries: 5 });
    const locomo = loadLocomo(DEFAULT_DATA_DIR, { conversations: 1, turns: 30, questions: 8 });
    expect(scifact.docs).toHaveLength(20);
    expect(scifact.queries).toHaveLength(5);
    expect(locomo[0].turns).toHaveLength(30);
    expect(locomo[0].questions.length).toBeGreaterThan(0);

    const configs = qualityConfigs([0, 0.5, 1]);
    const run = await runQuality(service, { embedder: 'glove', configs, scifact, locomo, concurrency: 2, progress: createProgress({ quiet: true }) });

    expect(run.modelId).toMatch(/^glove-sif/);
    expect(run.scifact!.ingest.items).toBe(20);
    expect(run.scifact!.ingest.chunks).toBeGreaterThanOrEqual(20);
    expect(run.scifact!.results.map((r) => r.config)).toEqual(configs.map((c) => c.name));
    for (const r of run.scifact!.results) {
      expect(r.queries).toBe(5);
      expect(r.ndcg10).toBeGreaterThanOrEqual(0);
      expect(r.ndcg10).toBeLessThanOrEqual(1);
      expect(r.recall100).toBeGreaterThanOrEqual(0);
      expect(r.recall100).toBeLessThanOrEqual(1);
      expect(r.latencyMs.n).toBe(10);
    }
    // The relevant documents are in the tiny corpus: the default configuration must find some of them.
    expect(run.scifact!.results.find((r) => r.config === 'hybrid')!.recall100).toBeGreaterThan(0);

    const l = run.locomo!;
    expect(l.conversations).toHaveLength(1);
    expect(l.conversations[0].ingest.chunks).toBe(30);
    expect(l.ks).toEqual([5, 10, 25, 50]);
    for (const r of l.results) {
      for (const k of l.ks) {
        expect(r.recall[String(k)].overall).toBeGreaterThanOrEqual(0);
        expect(r.recall[String(k)].overall).toBeLessThanOrEqual(100);
      }
      // With 30 turns, 50 results return every turn the engine matches; vector search matches them all.
      if (r.config === 'vector') expect(r.recall['50'].overall).toBe(100);
    }

    const md = qualityMarkdown({ kind: 'quality', environment: runEnvironment(), configuration: { smoke: true }, runs: [{ ...run, defaults: rankingDefaults() }], references: REFERENCES, targets: qualityTargets([run]), finishedAt: '' });
    expect(md).toContain('## SciFact');
    expect(md).toContain('## LoCoMo dev (evidence recall, %; in-sample');
    // each figure says which split the ranking defaults were chosen on, and the run which defaults it ran with
    expect(md).toContain('## Where the defaults were chosen');
    expect(md).toContain('SciFact train (809 queries): bench/results/quality-train-sweep.md');
    expect(md).toMatch(/- embedder `glove`.*; defaults: alpha [\d.]+, thinking graph weight/);
    expect(md).toContain('## Alpha sweep');
    expect(md).toContain('BM25 flat');
  });
});
