import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect } from '@lancedb/lancedb';
import type { RunEnvironment } from '../lib/env';

/** The newest LanceDB table of a store (`m` memory, `k` knowledge) in a DATA_DIR kept by `bench:speed --keep-data`. */
export async function keptTable(dataDir: string, store: string): Promise<{ lanceDir: string; table: string }> {
  const lanceDir = join(resolve(dataDir), 'lancedb');
  const names = await (await connect(lanceDir)).tableNames();
  const table = names.filter((n) => n.startsWith(`${store}_`)).sort().pop();
  if (!table) throw new Error(`no ${store}_ table under ${lanceDir}`);
  return { lanceDir, table };
}

/** Runs `use` on a fresh copy of the table in a temporary directory, removed afterwards. */
export async function onTableCopy<T>(lanceDir: string, table: string, use: (dir: string) => Promise<T> | T): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'crs-table-'));
  try {
    cpSync(join(lanceDir, `${table}.lance`), join(dir, `${table}.lance`), { recursive: true });
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The machine, its load and the commit, for the first line of a run's output. */
export function machineLine(env: RunEnvironment): string {
  return `${env.machine.cores} cores (${env.machine.cpu}), node ${env.machine.node}; load ${env.machine.loadAverageAtStart.join(' / ')}; commit ${env.commit.slice(0, 12)}${env.dirty ? ' (dirty)' : ''}`;
}
