import { runEnvironment } from '@crs/bench/lib/env';
import { createProgress } from '@crs/bench/lib/progress';
import { providersMarkdown, runProvider, type ProviderResult } from '@crs/bench/providers/run-providers';
import { SOURCE_NAMES } from '@crs/bench/providers/sources';
import { createTestDatabase } from '../support/test-database';

/**
 * Smoke run of the connector-provider benchmark (not a measurement: nothing here asserts a time): every provider
 * against its fake with a resource of five documents, through the service's HTTP API, each on a database of the test
 * run's Postgres, then the report.
 */
describe('connector provider benchmark harness (smoke)', () => {
  jest.setTimeout(300_000);

  it('seeds each fake, syncs every document to searchable, counts the calls of an unchanged sync and reports', async () => {
    const results: ProviderResult[] = [];
    for (const name of SOURCE_NAMES) results.push(await runProvider(name, 5, 60_000, createProgress({ quiet: true }), async () => ({ url: await createTestDatabase(`bench_providers_${name}`), stop: async () => undefined })));
    for (const r of results) {
      expect({ provider: r.provider, error: r.error }).toEqual({ provider: r.provider, error: undefined });
      expect(r.searchable).toBe(5);
      expect(r.searchableMs).not.toBeNull();
      expect(r.unchangedSync!.calls).toBe(Object.values(r.unchangedSync!.byEndpoint).reduce((a, b) => a + b, 0));
      expect(r.unchangedSync!.calls).toBeGreaterThanOrEqual(1);
      expect(r.unchangedSync!.counts).toMatchObject({ upserted: 0, deleted: 0, failed: 0 });
    }
    const md = providersMarkdown(runEnvironment(), 5, 60_000, results);
    for (const name of SOURCE_NAMES) expect(md).toContain(`## ${name}`);
  });
});
