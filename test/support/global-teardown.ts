import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const pg = (globalThis as any).__CRS_PG__;
  if (pg) await pg.stop();
  if (process.env.CRS_TEST_DATA_ROOT) rmSync(process.env.CRS_TEST_DATA_ROOT, { recursive: true, force: true });
}
