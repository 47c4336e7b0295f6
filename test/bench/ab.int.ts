import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrsClient, SEARCHABLE } from '@crs/bench/lib/client';
import { spawnService } from '@crs/bench/lib/service';
import { abMarkdown, parseVariants, runAb } from '@crs/bench/speed/ab.main';
import { SPEED_METADATA_SCHEMA } from '@crs/bench/speed/corpus';
import { SCENARIOS } from '@crs/bench/speed/run-speed';

/**
 * Smoke run of the side-by-side tool (no timing is asserted): a data directory made by the built service (embedded
 * Postgres under it, a few memories), then one round of two variants of the same build, one with a setting, each on
 * its own copy of the data. Needs dist/ (`npm install` builds it).
 */
describe('side-by-side query load (bench/speed/ab.main, smoke)', () => {
  jest.setTimeout(300_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'crs-ab-smoke-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs every variant on its own copy, measures load and CPU, and leaves the source data as it was', async () => {
    const service = await spawnService({ root: process.cwd(), dataDir });
    try {
      const client = new CrsClient(service.baseUrl, service.key);
      await client.createDatabase('speed', { metadata_schema: SPEED_METADATA_SCHEMA });
      const memories = Array.from({ length: 12 }, (_, i) => ({ id: `m${i}`, text: `memory ${i} about the weekend meeting and the cat`, additional_metadata: { source: 'chat' } }));
      await client.ingestMemories('speed', memories);
      await client.waitForIds('speed', memories.map((m) => m.id), { statuses: SEARCHABLE });
    } finally {
      await service.stop();
    }
    const before = readdirSync(dataDir).sort();

    const variants = parseVariants(`a=.;b=.,RETRIEVAL_POOL_MIN=20`);
    expect(variants.map((v) => [v.name, v.env])).toEqual([['a', {}], ['b', { RETRIEVAL_POOL_MIN: '20' }]]);
    const lines: string[] = [];
    const results = await runAb({ dataDir, variants, scenario: SCENARIOS.find((s) => s.name === 'fast memory')!, rounds: 1, durationS: 1, warmupS: 1, connections: 1, seed: 7, log: (l) => lines.push(l) });

    expect(results.map((r) => [r.round, r.variant])).toEqual([[1, 'a'], [1, 'b']]);
    for (const r of results) {
      expect(r.load.requests).toBeGreaterThan(0);
      expect(r.load.non2xx).toBe(0);
      expect(r.cpu.wallS).toBeGreaterThan(0);
    }
    expect(lines).toHaveLength(2);
    expect(abMarkdown(variants, 1, results).split('\n')).toHaveLength(4);
    expect(readdirSync(dataDir).sort()).toEqual(before);
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith(`crs-ab-a-${process.pid}`) || n.startsWith(`crs-ab-b-${process.pid}`))).toEqual([]);
  });
});
