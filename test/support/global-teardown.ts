import { rmSync } from 'node:fs';

/**
 * Stops the Postgres this run started and removes its directory: only what this process made (globalSetup runs in the
 * same process). A nested jest started by a test inherits CRS_TEST_DATA_ROOT in its environment; removing that
 * directory deleted the outer run's live Postgres under it.
 */
export default async function globalTeardown(): Promise<void> {
  const pg = (globalThis as any).__CRS_PG__;
  if (pg) await pg.stop();
  const dir: string | undefined = (globalThis as any).__CRS_PG_DIR__;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
