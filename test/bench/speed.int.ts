import { createProgress } from '@crs/bench/lib/progress';
import { runEnvironment } from '@crs/bench/lib/env';
import type { ServiceHandle } from '@crs/bench/lib/service';
import { logEventCount } from '@crs/bench/speed/pg-stats';
import { rebuiltPosition, summariseRebuild } from '@crs/bench/speed/rebuild';
import { speedMarkdown, speedTargets } from '@crs/bench/speed/report';
import { runSpeed } from '@crs/bench/speed/run-speed';
import { runCli } from '@crs/cli/cli';
import { startInProcessService } from './in-process-service';

/**
 * Smoke run of the speed benchmark harness (no timing is asserted): a 200-chunk generated corpus, three query
 * scenarios under 2-second autocannon runs with their floors, and a projection rebuild, against an in-process service.
 */
describe('speed benchmark harness (smoke)', () => {
  jest.setTimeout(600_000);
  let service: ServiceHandle;

  beforeAll(async () => {
    service = await startInProcessService('bench_speed');
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('generates, ingests, loads, measures floors, rebuilds and reports', async () => {
    const run = await runSpeed(service, {
      size: 200,
      durationS: 2,
      connections: [1, 16],
      scenarios: ['fast memory', 'fast all +acl +metadata', 'thinking all'],
      floor: 'inprocess',
      root: process.cwd(),
      progress: createProgress({ quiet: true }),
      rebuild: async (s) => {
        const lines: string[] = [];
        const started = Date.now();
        const code = await runCli(['projections', 'rebuild', 'all'], { out: (l) => lines.push(l), err: (l) => lines.push(l), env: { DATABASE_URL: s.databaseUrl(), DATA_DIR: s.dataDir, LOG_LEVEL: 'warn' }, progress: false });
        const wallMs = Date.now() - started;
        return summariseRebuild('crs projections rebuild all (in-process)', wallMs, lines, code, await logEventCount(s.databaseUrl(), rebuiltPosition(lines)));
      },
    });

    expect(run.ingest.map((p) => p.kind)).toEqual(['memories', 'documents', 'apps']);
    for (const p of run.ingest) {
      expect(p.items).toBeGreaterThan(0);
      expect(p.chunks).toBeGreaterThanOrEqual(p.items);
      expect(p.searchableMs).toBeGreaterThan(0);
      expect(p.completedMs).toBeGreaterThanOrEqual(p.searchableMs);
      expect(p.itemsPerSecondSearchable).toBeGreaterThan(0);
    }
    expect(run.chunks.total).toBeGreaterThanOrEqual(150);
    expect(run.chunks.total).toBeLessThanOrEqual(300);

    expect(run.fixedJson['1'].requests).toBeGreaterThan(0);
    expect(run.scenarios.map((s) => s.scenario.name)).toEqual(['fast memory', 'fast all +acl +metadata', 'thinking all']);
    for (const s of run.scenarios) {
      expect(s.preflightMeanChunks).toBeGreaterThan(0);
      expect(s.service['1'].requests).toBeGreaterThan(0);
      expect(s.service['1'].non2xx).toBe(0);
      expect(s.service['16']).toBeDefined();
      if (s.scenario.floor) {
        expect(s.engineHttp!['1'].requests).toBeGreaterThan(0);
        expect(s.engineHttp!['1'].non2xx).toBe(0);
        expect(s.engineInProcess!['1'].meanCandidates).toBeGreaterThan(0);
        expect(s.overhead!['1'].p50Ratio).toBeGreaterThan(0);
      }
    }
    // The service's own step timings for the breakdown queries: the engine calls of both stores, once per query.
    const steps = s(run.scenarios, 'fast all +acl +metadata').breakdown![0].stepsMs!;
    for (const step of ['total.fast', 'retrieve', 'engine.keyword.memory', 'engine.vector.knowledge', 'read_model.knowledge']) expect([step, steps[step]]).toEqual([step, expect.any(Number)]);
    expect(s(run.scenarios, 'thinking all').breakdown![0].stepsMs!['total.thinking']).toBeGreaterThan(0);
    expect(s(run.scenarios, 'fast all +acl +metadata').example.acl).toBeDefined();
    expect(s(run.scenarios, 'fast all +acl +metadata').example.metadata_filters).toBeDefined();

    const rebuilt = run.rebuild!.projections.map((p) => p.projection);
    expect(rebuilt).toEqual(expect.arrayContaining(['items', 'search-index']));
    expect(run.rebuild!.projections.find((p) => p.projection === 'items')!.events).toBeGreaterThan(0);
    // The whole rebuild counts each log event once: fewer than the projections' handled events added up, and
    // no more than every event up to the rebuilt position.
    const rebuild = run.rebuild!;
    const handled = rebuild.projections.reduce((a, p) => a + p.events, 0);
    expect(rebuild.log.events).toBeGreaterThan(0);
    expect(rebuild.log.events).toBeLessThan(handled);
    expect(rebuild.log.events).toBeLessThanOrEqual(rebuild.log.position);
    expect(rebuild.log.events).toBeGreaterThanOrEqual(Math.max(...rebuild.projections.map((p) => p.events)));
    expect(rebuild.whole.ms).toBe(rebuild.projections.reduce((a, p) => a + p.ms, 0));
    expect(rebuild.whole.logEventsPerSecond).toBe(Math.round((rebuild.log.events / Math.max(1, rebuild.whole.ms)) * 1000));
    expect(rebuild.readModels.logEventsPerSecond).toBeGreaterThanOrEqual(rebuild.whole.logEventsPerSecond);

    const report = { kind: 'speed' as const, environment: runEnvironment(), configuration: { smoke: true }, sizes: [{ run }], targets: speedTargets([{ run }]), finishedAt: '' };
    const md = speedMarkdown(report);
    expect(md).toContain('### Ingest');
    expect(md).toContain('floor: Fastify fixed JSON');
    expect(md).toContain('floor: engine via Fastify');
    expect(md).toContain('### Projection rebuild');
    expect(md).toContain(`| **whole rebuild** (every projection in turn) |  | ${rebuild.whole.ms} |  | **${rebuild.whole.logEventsPerSecond}** |`);
    expect(md).toContain(`whole rebuild ${rebuild.whole.logEventsPerSecond} log events/s (${rebuild.log.events} events, each counted once)`);
    expect(md).toMatch(/- fast all \+acl \+metadata: .*engine\.keyword\.memory \d/);
  });
});

function s<T extends { scenario: { name: string } }>(list: T[], name: string): T {
  return list.find((x) => x.scenario.name === name)!;
}
