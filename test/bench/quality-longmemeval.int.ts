import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createProgress } from '@crs/bench/lib/progress';
import { runEnvironment } from '@crs/bench/lib/env';
import type { ServiceHandle } from '@crs/bench/lib/service';
import { DEFAULT_DATA_DIR, LONGMEMEVAL_FILE, loadLongMemEval } from '@crs/bench/quality/datasets';
import { longMemEvalMarkdown, qualityTargets, rankingDefaults, REFERENCES } from '@crs/bench/quality/report';
import { qualityConfigs, runQuality } from '@crs/bench/quality/run-quality';
import { startInProcessService } from './in-process-service';

/**
 * Smoke run of the LongMemEval-S part of the quality benchmark (not a measurement: nothing here asserts a score):
 * two questions, each haystack cut to its correct sessions and six others, through the HTTP API of an in-process
 * service, fast, thinking and keyword only, then the report's section.
 */
const haveXz = (() => {
  try {
    execFileSync('xz', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const haveData = haveXz && existsSync(join(DEFAULT_DATA_DIR, LONGMEMEVAL_FILE));
if (!haveData) console.log(`bench LongMemEval smoke skipped: no ${LONGMEMEVAL_FILE} under ${DEFAULT_DATA_DIR} or no xz binary`);

(haveData ? describe : describe.skip)('quality benchmark harness, LongMemEval-S (smoke)', () => {
  jest.setTimeout(60_000);
  let service: ServiceHandle;

  beforeAll(async () => {
    service = await startInProcessService('bench_lme');
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('one database per question, sessions as memories, top 10 sessions per configuration, the section', async () => {
    const data = loadLongMemEval(DEFAULT_DATA_DIR, { questions: 2, fillers: 6 });
    expect(data.questions).toHaveLength(2);
    expect(data.file.questions).toBe(80);
    const configs = qualityConfigs([0.5]);
    const run = await runQuality(service, { embedder: 'glove', configs, longmemeval: data, concurrency: 2, progress: createProgress({ quiet: true }) });

    const l = run.longmemeval!;
    expect(l.databases).toHaveLength(2);
    expect(l.sessions).toBe(data.questions.reduce((a, q) => a + q.sessions.length, 0));
    expect(l.chunks).toBeGreaterThanOrEqual(l.sessions);
    // the sweep is not run on LongMemEval
    expect(l.results.map((r) => r.config)).toEqual(['keyword', 'vector', 'hybrid', 'thinking']);
    for (const r of l.results) {
      expect(r.questions).toBe(2);
      for (const v of Object.values(r.overall)) {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1);
      }
      for (const q of r.perQuestion) {
        const ids = new Set(data.questions.find((x) => x.id === q.id)!.sessions.map((s) => s.id));
        expect(q.top10.every((id) => ids.has(id))).toBe(true);
        expect(new Set(q.top10).size).toBe(q.top10.length);
      }
    }
    // a haystack of eight or so sessions: vector search returns them all, so every correct session is in the top 10
    expect(l.results.find((r) => r.config === 'vector')!.overall.recallAll10).toBe(1);

    const md = longMemEvalMarkdown({ kind: 'quality', environment: runEnvironment(), configuration: {}, runs: [{ ...run, defaults: rankingDefaults() }], references: REFERENCES, targets: qualityTargets([run]), finishedAt: '' });
    expect(md).toMatch(/^## LongMemEval-S dev/);
    expect(md).toContain('- split: dev');
    expect(md).toMatch(/- run \(`glove`.*commit `[0-9a-f]{40}`.*machine: \d+ cores/);
    expect(md).toContain('BM25 over the same units');
    expect(md).toContain('| single-session-user (1) | glove: hybrid (default alpha) |');
  });
});
