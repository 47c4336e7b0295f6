import { join, resolve } from 'node:path';
import { connect, MatchQuery, Operator, type Table } from '@lancedb/lancedb';
import { callerPrincipals } from '@crs/domain/acl';
import { GloveSifEmbedder } from '@crs/embeddings/glove-sif.embedder';
import { FTS_COLUMN, LEAN_COLUMNS } from '@crs/search/lancedb-chunk-table';
import { lanceWhere } from '@crs/search/lancedb-where';
import type { QueryBody } from '../lib/client';
import { parseArgs } from '../lib/args';
import { latencySummary } from '../lib/stats';
import { FLOOR_POOL } from './floor';
import { bodyGenerator, SCENARIOS } from './run-speed';

const USAGE = `node dist/bench/speed/engine-probe.main.js --data-dir <DATA_DIR kept by bench:speed --keep-data> [options]
  --scenario "<name>"   query scenario (default "fast all +acl +metadata")
  --queries 40          queries per measurement
  --seed 42
  --pools 50            comma-separated candidate pools to compare (e.g. 50,30)
  --columns lean        comma-separated column sets to compare: lean (${LEAN_COLUMNS.join(', ')}: what the service reads),
                        four (chunk_id, item_id, text, version: before the packed column), ids (chunk_id, item_id, version)
Times each engine call of a /query on its own (keyword and vector, per store), then all of them in parallel
as the service issues them, on the service's LanceDB tables: where the engine part of a query's time goes.`;

/** The newest generation of each store's table in a data directory with one database. */
async function tablesOf(lanceDir: string): Promise<{ memory?: Table; knowledge?: Table }> {
  const db = await connect(lanceDir);
  const names = await db.tableNames();
  const latest = (prefix: string) => names.filter((n) => n.startsWith(`${prefix}_`)).sort((a, b) => Number(b.split('_g').pop()) - Number(a.split('_g').pop()))[0];
  const out: { memory?: Table; knowledge?: Table } = {};
  if (latest('m')) out.memory = await db.openTable(latest('m'));
  if (latest('k')) out.knowledge = await db.openTable(latest('k'));
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), { 'data-dir': 'string', scenario: 'string', queries: 'string', seed: 'string', pools: 'string', columns: 'string', help: 'boolean' });
  if (args.help || !args['data-dir']) return void console.log(USAGE);
  const lanceDir = join(resolve(String(args['data-dir'])), 'lancedb');
  const scenario = SCENARIOS.find((s) => s.name === String(args.scenario ?? 'fast all +acl +metadata'));
  if (!scenario) throw new Error(`unknown scenario; one of: ${SCENARIOS.map((s) => s.name).join('; ')}`);
  const n = Number(args.queries ?? 40);
  const tables = await tablesOf(lanceDir);
  for (const [store, t] of Object.entries(tables)) {
    const stats = await t.indexStats(`${FTS_COLUMN}_idx`).catch(() => undefined);
    console.log(`${store}: ${await t.countRows()} rows, indexes ${(await t.listIndices()).map((i) => i.name).join(', ')}; fts unindexed ${stats?.numUnindexedRows ?? '?'}`);
  }
  const embedder = new GloveSifEmbedder();
  await embedder.load();
  const stores = scenario.type === 'all' ? (['knowledge', 'memory'] as const) : [scenario.type];
  const gen = bodyGenerator(scenario, Number(args.seed ?? 42) * 1000 + 700);
  const bodies: QueryBody[] = Array.from({ length: n }, gen);
  const whereOf = (b: QueryBody) => {
    const metadata: Record<string, any> = {};
    let additionalMetadata: Record<string, any> | undefined;
    for (const [k, v] of Object.entries(b.metadata_filters ?? {})) {
      if (k === 'additional_metadata') additionalMetadata = v as Record<string, any>;
      else metadata[k] = v;
    }
    return lanceWhere({ collections: ['default'], now: Date.now(), includeApps: true, principalsAny: callerPrincipals(b.acl), metadata: Object.keys(metadata).length ? metadata : undefined, additionalMetadata });
  };
  const pools = String(args.pools ?? FLOOR_POOL).split(',').map(Number);
  const columnSets: Record<string, string[]> = { lean: LEAN_COLUMNS, four: ['chunk_id', 'item_id', 'text', 'version'], ids: ['chunk_id', 'item_id', 'version'] };
  const variants = String(args.columns ?? 'lean').split(',').flatMap((cols) => {
    if (!columnSets[cols]) throw new Error(`unknown column set ${cols}: one of ${Object.keys(columnSets).join(', ')}`);
    return pools.map((pool) => ({ label: `pool ${pool}, ${cols}`, pool, columns: columnSets[cols] }));
  });
  const calls: Record<string, (b: QueryBody, v: Float32Array) => Promise<number>> = {};
  const groups: Record<string, string[]> = {};
  for (const { label, pool, columns } of variants) {
    groups[label] = [];
    for (const store of stores) {
      const t = tables[store];
      if (!t) continue;
      const add = (name: string, f: (b: QueryBody, v: Float32Array) => Promise<number>, parallel = true) => {
        calls[`${name} [${label}]`] = f;
        if (parallel) groups[label].push(`${name} [${label}]`);
      };
      add(`keyword ${store}`, async (b) => {
        const q = t.query().fullTextSearch(new MatchQuery(b.query, FTS_COLUMN, { operator: Operator.Or })).select([...columns, '_score']).limit(pool);
        const w = whereOf(b);
        if (w) q.where(w);
        return (await q.toArrow()).numRows;
      });
      add(`vector ${store}`, async (b, v) => {
        const q = t.vectorSearch(v).distanceType('cosine').select([...columns, '_distance']).limit(pool);
        const w = whereOf(b);
        if (w) q.where(w);
        return (await q.toArrow()).numRows;
      });
      if (label !== variants[0].label) continue;
      add(`keyword ${store} (no filter)`, async (b) => (await t.query().fullTextSearch(new MatchQuery(b.query, FTS_COLUMN, { operator: Operator.Or })).select([...columns, '_score']).limit(pool).toArrow()).numRows, false);
      add(`vector ${store} (no filter)`, async (_b, v) => (await t.vectorSearch(v).distanceType('cosine').select([...columns, '_distance']).limit(pool).toArrow()).numRows, false);
      add(`vector ${store} (flat, bypass index)`, async (b, v) => {
        const q = t.vectorSearch(v).distanceType('cosine').bypassVectorIndex().select([...columns, '_distance']).limit(pool);
        const w = whereOf(b);
        if (w) q.where(w);
        return (await q.toArrow()).numRows;
      }, false);
    }
  }
  const vectors = await Promise.all(bodies.map(async (b) => (await embedder.embed([b.query]))[0]));
  // Warm-up: caches, index pages.
  for (const [i, b] of bodies.slice(0, 5).entries()) for (const f of Object.values(calls)) await f(b, vectors[i]);
  console.log(`\n${scenario.name}: ${n} queries, medians (ms) of each call alone, sequentially`);
  for (const [name, f] of Object.entries(calls)) {
    const times: number[] = [];
    let rows = 0;
    for (const [i, b] of bodies.entries()) {
      const t0 = performance.now();
      rows += await f(b, vectors[i]);
      times.push(performance.now() - t0);
    }
    const s = latencySummary(times);
    console.log(`  ${name.padEnd(56)} p50 ${s.p50.toFixed(1)}  p95 ${s.p95.toFixed(1)}  rows/call ${(rows / n).toFixed(1)}`);
  }
  for (const [label, names] of Object.entries(groups)) {
    const times: number[] = [];
    for (const [i, b] of bodies.entries()) {
      const t0 = performance.now();
      await Promise.all(names.map((name) => calls[name](b, vectors[i])));
      times.push(performance.now() - t0);
    }
    const s = latencySummary(times);
    console.log(`  ${`all of them in parallel (as the service) [${label}]`.padEnd(56)} p50 ${s.p50.toFixed(1)}  p95 ${s.p95.toFixed(1)}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
