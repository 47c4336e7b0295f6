import { runEnvironment } from '@crs/bench/lib/env';
import { createProgress } from '@crs/bench/lib/progress';
import type { ServiceHandle } from '@crs/bench/lib/service';
import { soakMarkdown, soakTargets } from '@crs/bench/soak/report';
import { runSoak } from '@crs/bench/soak/run-soak';
import { startInProcessService } from './in-process-service';

/**
 * Smoke run of the soak harness (no memory, latency or disk threshold is asserted): a few seconds of mixed load on an
 * in-process service, sampled per second, then the per-store disk report.
 */
describe('soak benchmark harness (smoke)', () => {
  jest.setTimeout(300_000);
  let service: ServiceHandle;

  beforeAll(async () => {
    service = await startInProcessService('bench_soak');
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('seeds, loads with queries, ingests and status reads, samples, drains and reports disk per store', async () => {
    const result = await runSoak(service, {
      clients: 3,
      durationS: 4,
      seedMemories: 30,
      mix: { query: 0.5, ingest: 0.3 },
      memoriesPerIngest: 2,
      sampleS: 1,
      settleS: 0,
      seed: 3,
      progress: createProgress({ quiet: true }),
      serviceRss: () => process.memoryUsage().rss,
    });

    expect(result.samples.length).toBe(4);
    expect(result.samples.map((s) => s.window)).toEqual([1, 2, 3, 4]);
    const kinds = result.samples.reduce((a, s) => ({ query: a.query + s.byKind.query, ingest: a.ingest + s.byKind.ingest, status: a.status + s.byKind.status }), { query: 0, ingest: 0, status: 0 });
    expect(kinds.query).toBeGreaterThan(0);
    expect(kinds.ingest).toBeGreaterThan(0);
    expect(kinds.status).toBeGreaterThan(0);
    expect(result.totals.errors).toBe(0);
    expect(result.totals.requests).toBe(kinds.query + kinds.ingest + kinds.status);
    expect(result.memories.ingested).toBe(2 * kinds.ingest);
    expect(result.memories.total).toBe(30 + result.memories.ingested);
    for (const s of result.samples) expect(s.serviceRssMiB).toBeGreaterThan(0);
    for (const s of result.samples) expect(s.serviceRssMaxMiB).toBeGreaterThanOrEqual(s.serviceRssMiB);

    // Every store is measured; the in-process service keeps Postgres elsewhere, so only the engine holds bytes under
    // its data directory. Memories of a sentence are small blobs: rows of blob_rows, not files.
    expect(result.disk.map((d) => d.store)).toEqual(['postgres (tables, indexes)', 'postgres write-ahead log', 'search index (LanceDB)', 'content blobs']);
    expect(result.disk.find((d) => d.store === 'search index (LanceDB)')!.bytes).toBeGreaterThan(0);
    expect(result.disk.find((d) => d.store === 'content blobs')!.files).toBe(0);
    expect(result.postgresTables.find((t) => t.table === 'blob_rows')!.bytes).toBeGreaterThan(0);
    const events = Object.fromEntries(result.postgresEvents.map((e) => [e.type, e.count]));
    expect(events.ItemIngested).toBe(result.memories.total);
    expect(events.QueryRecorded).toBe(kinds.query);

    const md = soakMarkdown(result, runEnvironment(process.cwd()), 'npm run bench:soak -- --smoke');
    expect(md).toContain('## Per window');
    expect(md).toContain('| search index (LanceDB) |');
    expect(soakTargets(result).map((x) => x.what)).toEqual([
      'service resident memory, last 5 windows (window means; highest reading)',
      'p50, last window vs window 2',
      'requests per window, last vs window 2',
      'disk per memory, all stores, settled',
      'of it, what grows with the content (less the bounded write-ahead log and the retained query history)',
      'errors',
    ]);
  });
});
