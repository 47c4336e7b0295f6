import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from '../lib/args';
import { CrsClient, mapPool, type QueryBody } from '../lib/client';
import { createProgress } from '../lib/progress';
import { benchKey, spawnService } from '../lib/service';
import { distinctIds, mean, ndcgAtK, recallAtK, round } from '../lib/stats';
import { DEFAULT_DATA_DIR, loadLocomo, loadScifact } from './datasets';
import { ingestAndWait } from './run-quality';

const USAGE = `node dist/bench/quality/sweep-thinking.js --dataset scifact|locomo --dir <service data dir> [options]
Tunes settings read at service start (the thinking-mode weights THINKING_*, or any env such as RETRIEVAL_POOL_MIN)
and the query's alpha on the dev data: ingests once into --dir (kept), then restarts the service on the same --dir
for every distinct set of env settings and runs only the queries.
  --ingest                 ingest the dataset into --dir first (a fresh dir)
  --settings 'graph_weight=0,rrf_k=10;graph_weight=0.2,rrf_k=60,hit_entity=0'   per setting, ';' between settings:
                           a lowercase key is THINKING_<KEY>, an uppercase key (RETRIEVAL_POOL_MIN=30) is used as is;
                           alpha=0.3 is sent as the query body's alpha (fast or thinking), not as env, so
                           --mode fast --settings 'alpha=0;alpha=0.1;alpha=0.2' runs on one service start
  --mode thinking|fast     the mode the settings are queried in (default thinking)
  --scifact-split test|train  SciFact queries to score (default test; train is for tuning)
  --baseline               also run fast hybrid (default alpha) and thinking with the built-in defaults
  --ks 10                  LoCoMo k's (default 5,10,25,50)
  --concurrency 4
  --out <file.jsonl>       one line per result (appended)`;

interface Result {
  dataset: string;
  setting: string;
  mode: string;
  ndcg10?: number;
  recall?: Record<string, number>;
  ms: number;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), { dataset: 'string', dir: 'string', ingest: 'boolean', settings: 'string', mode: 'string', 'scifact-split': 'string', baseline: 'boolean', ks: 'string', concurrency: 'string', out: 'string', help: 'boolean' });
  if (args.help || !args.dir || !args.dataset) return void console.log(USAGE);
  const root = resolve(__dirname, '../../..');
  const dataset = String(args.dataset);
  if (!['scifact', 'locomo'].includes(dataset)) throw new Error(`unknown dataset ${dataset}`);
  const dir = resolve(String(args.dir));
  const keyFile = join(dir, 'bench-key');
  const concurrency = Number(args.concurrency ?? 4);
  const ks = args.ks ? String(args.ks).split(',').map(Number) : [5, 10, 25, 50];
  const out = args.out ? resolve(String(args.out)) : undefined;
  const progress = createProgress();
  const mode = String(args.mode ?? 'thinking');
  if (mode !== 'thinking' && mode !== 'fast') throw new Error(`unknown mode ${mode} (thinking, fast)`);
  const split = String(args['scifact-split'] ?? 'test');
  if (split !== 'test' && split !== 'train') throw new Error(`unknown SciFact split ${split} (test, train)`);
  const scifact = dataset === 'scifact' ? loadScifact(DEFAULT_DATA_DIR, undefined, split) : undefined;
  const locomo = dataset === 'locomo' ? loadLocomo(DEFAULT_DATA_DIR) : undefined;
  const dbOf = (convId: string) => `locomo-${convId}`.replace(/[^A-Za-z0-9_-]/g, '-');

  if (args.ingest) {
    if (existsSync(keyFile)) throw new Error(`${dir} already holds an ingest`);
    const key = benchKey();
    const service = await spawnService({ root, dataDir: dir, key });
    writeFileSync(keyFile, key);
    try {
      const client = new CrsClient(service.baseUrl, key);
      if (scifact) {
        await client.createDatabase('scifact');
        const t = await ingestAndWait(client, 'scifact', scifact.docs.length, (s, e) => client.ingestKnowledge('scifact', scifact.docs.slice(s, e).map((d) => ({ id: d.id, ...(d.title ? { title: d.title } : {}), content: { text: d.text } }))), scifact.docs.map((d) => d.id), progress, 'SciFact');
        progress.log(`SciFact ingested: ${JSON.stringify(t)}`);
      }
      for (const conv of locomo ?? []) {
        const db = dbOf(conv.id);
        await client.createDatabase(db);
        const t = await ingestAndWait(
          client,
          db,
          conv.turns.length,
          (s, e) => client.ingestMemories(db, conv.turns.slice(s, e).map((x) => ({ id: x.id, text: x.text, additional_metadata: { session: x.session, ...(x.dateTime ? { session_date_time: x.dateTime } : {}) } }))),
          conv.turns.map((x) => x.id),
          progress,
          `LoCoMo ${conv.id}`,
        );
        progress.log(`LoCoMo ${conv.id} ingested: ${JSON.stringify(t)}`);
      }
    } finally {
      await service.stop();
    }
  }
  const key = readFileSync(keyFile, 'utf8').trim();

  const runs: { setting: string; env: Record<string, string>; body: Partial<QueryBody> }[] = [];
  if (args.baseline) runs.push({ setting: 'fast hybrid', env: {}, body: {} }, { setting: 'thinking defaults', env: {}, body: { mode: 'thinking' } });
  for (const s of String(args.settings ?? '').split(';').map((x) => x.trim()).filter(Boolean)) {
    const env: Record<string, string> = {};
    const body: Partial<QueryBody> = mode === 'thinking' ? { mode: 'thinking' } : {};
    for (const kv of s.split(',')) {
      const [k, v] = kv.split('=');
      const key = k.trim();
      if (key === 'alpha') body.alpha = queryAlpha(v);
      else env[key === key.toUpperCase() ? key : `THINKING_${key.toUpperCase()}`] = v.trim();
    }
    runs.push({ setting: s, env, body });
  }
  // Settings with the same env share one service start.
  const byEnv = new Map<string, typeof runs>();
  for (const r of runs) byEnv.set(JSON.stringify(r.env), [...(byEnv.get(JSON.stringify(r.env)) ?? []), r]);
  for (const [envJson, group] of byEnv) {
    const service = await spawnService({ root, dataDir: dir, key, env: JSON.parse(envJson) });
    try {
      const client = new CrsClient(service.baseUrl, key);
      for (const r of group) {
        const started = Date.now();
        const result: Result = { dataset: dataset === 'scifact' ? `scifact-${split}` : dataset, setting: r.setting, mode: r.body.mode ?? 'fast', ms: 0 };
        if (scifact) {
          const ndcg = await mapPool(scifact.queries, concurrency, async (q) => {
            const chunks = await client.query({ database: 'scifact', query: q.text, type: 'knowledge', max_results: 10, ...r.body });
            return ndcgAtK(distinctIds(chunks.map((c) => c.id)), q.relevant, 10);
          });
          result.ndcg10 = round(mean(ndcg));
        }
        if (locomo) {
          const questions = locomo.flatMap((c) => c.questions.map((q) => ({ ...q, database: dbOf(c.id) })));
          const per = await mapPool(questions, concurrency, async (q) => {
            const byK: Record<number, number> = {};
            for (const k of ks) {
              const chunks = await client.query({ database: q.database, query: q.question, type: 'memory', max_results: k, ...r.body });
              byK[k] = recallAtK(distinctIds(chunks.map((c) => c.id)), new Set(q.evidence), k);
            }
            return byK;
          });
          result.recall = Object.fromEntries(ks.map((k) => [`R@${k}`, round(100 * mean(per.map((p) => p[k])), 2)]));
        }
        result.ms = Date.now() - started;
        progress.log(`RESULT ${JSON.stringify(result)}`);
        if (out) writeFileSync(out, `${JSON.stringify(result)}\n`, { flag: 'a' });
      }
    } finally {
      await service.stop();
    }
  }
  progress.stop();
}

/** A setting's `alpha=` value as the query body sends it: a number from 0 to 1, or "auto". */
function queryAlpha(raw: string | undefined): number | 'auto' {
  const v = (raw ?? '').trim();
  if (v === 'auto') return 'auto';
  const n = Number(v);
  if (v === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new Error(`alpha must be a number from 0 to 1 or "auto", got ${raw}`);
  return n;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
