import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '@crs/api/app.factory';
import { configFromEnv } from '@crs/config';
import { benchKey, type ServiceHandle } from '@crs/bench/lib/service';
import { createTestDatabase } from '../support/test-database';

/**
 * The service in this process for the benchmark smoke tests: createApp on a fresh Postgres database of the test
 * run and a fresh data directory, listening on a free port of 127.0.0.1 (the benchmarks still talk HTTP to it).
 */
export async function startInProcessService(label: string, env: Record<string, string> = {}): Promise<ServiceHandle> {
  const databaseUrl = await createTestDatabase(label);
  const dataDir = mkdtempSync(join(tmpdir(), `crs-bench-${label}-`));
  const key = benchKey();
  const config = configFromEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', BOOTSTRAP_API_KEY: key, ...env }, databaseUrl);
  const startedAt = Date.now();
  const { app, close } = await createApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    key,
    dataDir,
    startedAt,
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ...env },
    databaseUrl: () => databaseUrl,
    async stop() {
      await close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
