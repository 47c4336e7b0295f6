import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { connect } from '@lancedb/lancedb';
import type { ChunkDoc, SearchIndex } from '@crs/search/search-index.port';
import { parseArgs } from '../lib/args';
import { runEnvironment } from '../lib/env';
import { seededRandom } from '../lib/prng';
import { keptTable, machineLine, onTableCopy } from './kept-table';

const USAGE = `node dist/bench/speed/engine-trickle.main.js --data-dir <DATA_DIR kept by bench:speed --keep-data> --variants "base=/other/checkout;new=." [options]
  --store m             m (memory) or k (knowledge): the table of the kept corpus to copy
  --duration 90         seconds of load per variant and round
  --rounds 2            rounds; each runs every variant once, in turn, on a fresh copy of the table
  --write-every 40      ms between two writes of 5 rows
The search engine alone under a steady trickle of writes: each variant's built LanceDB adapter (<root>/dist) opens a
copy of the table, waits for its start-up maintenance, then for --duration seconds one writer upserts 5 rows every
--write-every ms while one client asks a keyword and a vector search (30 candidates each) at a time. Prints
queries/s, their p50 / p90, the writes made and the process's CPU seconds, per variant and round: what the
background optimize the writes bring costs the queries.`;

interface Variant {
  name: string;
  root: string;
}

/** One variant's run, in a process of its own (each checkout's adapter, its own LanceDB native state). */
async function runOne(root: string, tableDir: string, table: string, durationS: number, writeEveryMs: number): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { LanceDbSearchIndex } = require(join(root, 'dist/libs/search/src/lancedb-search-index.js')) as { LanceDbSearchIndex: new (o: { dir: string }) => SearchIndex & { close(): Promise<void> } };
  const index = new LanceDbSearchIndex({ dir: tableDir });
  const db = await connect(tableDir, { readConsistencyInterval: 0 });
  const raw = await db.openTable(table);
  const sample = await raw.query().select(['text', 'vector']).limit(2000).toArrow();
  const texts = sample.getChild('text')!.toArray() as string[];
  const vectors = (sample.getChild('vector')!.toArray() as { toArray(): Float32Array }[]).map((v) => Array.from(v.toArray()));
  const words = texts.join(' ').toLowerCase().match(/[a-z]{4,}/g) ?? ['text'];
  const random = seededRandom(5);
  await index.keywordSearch(table, 'warm up', { limit: 30 }); // opens the table: its start-up maintenance begins
  await new Promise((r) => setTimeout(r, 8000));
  const positions = (await raw.listIndices()).find((i) => i.name === 'fts_text_idx')?.indexDetails?.with_position;
  let n = 0;
  const doc = (i: number): ChunkDoc => ({
    chunkId: `trickle-${i}`, itemId: `trickle-item-${i}`, store: 'memory', collection: 'default', title: null, text: `${texts[i % texts.length]} extra${i}`,
    vector: vectors[i % vectors.length], principals: null, metadata: {}, additionalMetadata: {}, sourceType: 'memory', isApp: false,
    createdAt: 1, updatedAt: 1, expiresAt: null, version: 1,
  });
  const cpu = process.cpuUsage();
  const end = Date.now() + durationS * 1000;
  let writes = 0;
  const writer = (async () => {
    while (Date.now() < end) {
      await index.upsert(table, Array.from({ length: 5 }, () => doc(n++)));
      writes++;
      await new Promise((r) => setTimeout(r, writeEveryMs));
    }
  })();
  const latencies: number[] = [];
  while (Date.now() < end) {
    const query = Array.from({ length: 5 }, () => words[Math.floor(random() * words.length)]).join(' ');
    const started = Date.now();
    await Promise.all([
      index.keywordSearch(table, query, { limit: 30, fields: 'lean' }),
      index.vectorSearch(table, vectors[Math.floor(random() * vectors.length)], { limit: 30, fields: 'lean' }),
    ]);
    latencies.push(Date.now() - started);
  }
  await writer;
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))];
  console.log(
    `full-text index with positions: ${positions}; ${latencies.length} queries (${(latencies.length / durationS).toFixed(1)}/s), p50 ${at(0.5)} / p90 ${at(0.9)} ms; ${writes} writes; CPU ${((used.user + used.system) / 1e6).toFixed(1)} s`,
  );
  raw.close();
  db.close();
  await index.close();
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), {
    'data-dir': 'string', variants: 'string', store: 'string', duration: 'string', rounds: 'string', 'write-every': 'string', help: 'boolean',
    'one-root': 'string', 'one-dir': 'string', 'one-table': 'string',
  });
  const durationS = Number(args.duration ?? 90);
  const writeEveryMs = Number(args['write-every'] ?? 40);
  if (args['one-root']) return runOne(String(args['one-root']), String(args['one-dir']), String(args['one-table']), durationS, writeEveryMs);
  if (args.help || !args['data-dir'] || !args.variants) return void console.log(USAGE);
  const variants: Variant[] = String(args.variants).split(';').filter(Boolean).map((part) => {
    const eq = part.indexOf('=');
    const root = resolve(part.slice(eq + 1));
    if (eq <= 0 || !existsSync(join(root, 'dist/libs/search/src/lancedb-search-index.js'))) throw new Error(`bad variant ${part}: want name=root of a built checkout`);
    return { name: part.slice(0, eq), root };
  });
  const { lanceDir, table } = await keptTable(String(args['data-dir']), String(args.store ?? 'm'));
  console.log(`engine under a trickle: ${table}, ${durationS} s per run, 5 rows every ${writeEveryMs} ms; ${machineLine(runEnvironment(resolve('.')))}`);
  for (let round = 1; round <= Number(args.rounds ?? 2); round++) {
    for (const v of variants) {
      const out = await onTableCopy(lanceDir, table, (dir) =>
        execFileSync(process.execPath, [__filename, '--one-root', v.root, '--one-dir', dir, '--one-table', table, '--duration', String(durationS), '--write-every', String(writeEveryMs)], { encoding: 'utf8' }),
      );
      console.log(`round ${round} ${v.name.padEnd(8)} ${out.trim().split('\n').pop()}`);
    }
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
