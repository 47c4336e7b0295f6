import { resolve } from 'node:path';
import { connect } from '@lancedb/lancedb';
import { LanceDbSearchIndex } from '@crs/search';
import type { ChunkDoc } from '@crs/search/search-index.port';
import { parseArgs } from '../lib/args';
import { runEnvironment } from '../lib/env';
import { keptTable, machineLine, onTableCopy } from './kept-table';

const USAGE = `node dist/bench/speed/engine-turn.main.js --data-dir <DATA_DIR kept by bench:speed --keep-data> [options]
  --store m        m (memory) or k (knowledge): the table of the kept corpus to copy
  --turns 100      turns per run
The search engine alone, an agent's turns on one table: each turn writes one memory, then asks a keyword and a vector
search (30 candidates each, expiry and collection filters) in parallel, then waits 50 ms. Run twice on fresh copies of
the table: every search in the engine (residentMaxRows 0), then with the defaults (a table of at most 5,000 rows
searched from a copy held in the process). Prints the searches' p50 / p90, the writes' p50 and the CPU per turn.`;

async function run(tableDir: string, table: string, turns: number, residentMaxRows: number | undefined): Promise<string> {
  const db = await connect(tableDir);
  const raw = await db.openTable(table);
  const rows = await raw.countRows();
  const sample = await raw.query().select(['text', 'vector']).limit(300).toArrow();
  const texts = sample.getChild('text')!.toArray() as string[];
  const vectors = (sample.getChild('vector')!.toArray() as { toArray(): Float32Array }[]).map((v) => Array.from(v.toArray()));
  raw.close();
  db.close();
  const index = new LanceDbSearchIndex({ dir: tableDir, ...(residentMaxRows === undefined ? {} : { residentMaxRows }) });
  await index.keywordSearch(table, 'warm up', { limit: 5 });
  const doc = (i: number): ChunkDoc => ({
    chunkId: `turn-${i}`, itemId: `turn-item-${i}`, store: 'memory', collection: 'default', title: null, text: `${texts[i % texts.length]} turn ${i}`,
    vector: vectors[i % vectors.length], principals: null, metadata: {}, additionalMetadata: {}, sourceType: 'memory', isApp: false,
    createdAt: 1, updatedAt: 1, expiresAt: null, version: 1_000_000 + i,
  });
  const searches: number[] = [];
  const writes: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < turns; i++) {
    let started = process.hrtime.bigint();
    await index.upsert(table, [doc(i)]);
    writes.push(Number(process.hrtime.bigint() - started) / 1e6);
    started = process.hrtime.bigint();
    const filter = { now: Date.now(), collections: ['default'] };
    await Promise.all([
      index.keywordSearch(table, texts[(i * 7) % texts.length].split(' ').slice(0, 6).join(' '), { limit: 30, fields: 'lean', filter }),
      index.vectorSearch(table, vectors[(i * 3) % vectors.length], { limit: 30, fields: 'lean', filter }),
    ]);
    searches.push(Number(process.hrtime.bigint() - started) / 1e6);
    await new Promise((r) => setTimeout(r, 50));
  }
  const used = process.cpuUsage(cpu);
  await index.close();
  const at = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))].toFixed(2);
  const label = residentMaxRows === 0 ? 'engine  ' : 'resident';
  return `${label} ${rows} rows: searches after a write p50 ${at(searches, 0.5)} / p90 ${at(searches, 0.9)} ms; writes p50 ${at(writes, 0.5)} ms; CPU per turn ${((used.user + used.system) / 1000 / turns).toFixed(1)} ms`;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), { 'data-dir': 'string', store: 'string', turns: 'string', help: 'boolean' });
  if (args.help || !args['data-dir']) return void console.log(USAGE);
  const { lanceDir, table } = await keptTable(String(args['data-dir']), String(args.store ?? 'm'));
  console.log(`an agent's turns on ${table}; ${machineLine(runEnvironment(resolve('.')))}`);
  for (const residentMaxRows of [0, undefined]) {
    console.log(await onTableCopy(lanceDir, table, (dir) => run(dir, table, Number(args.turns ?? 100), residentMaxRows)));
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
