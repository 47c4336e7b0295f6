import { runCli } from '@crs/cli/cli';
import type { TestApp } from './test-app';

/** Runs the `crs` CLI in this process against a test app's Postgres and data directory (its own catalog and pools). */
export async function crs(t: TestApp, ...args: string[]) {
  return crsWith(t, {}, ...args);
}

/** `crs` with more environment (another embedder: EMBEDDINGS_PROVIDER, ...). */
export async function crsWith(t: TestApp, env: Record<string, string>, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const adapters = { ...(t.config.eventstoreUrl ? { EVENTSTORE_URL: t.config.eventstoreUrl } : {}), ...(t.config.elasticsearchUrl ? { ELASTICSEARCH_URL: t.config.elasticsearchUrl } : {}) };
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l), env: { DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.config.dataDir, ...adapters, ...env }, progress: false });
  return { code, out, err };
}
