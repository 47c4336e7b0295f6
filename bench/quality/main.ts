import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { numberList, parseArgs } from '../lib/args';
import { runEnvironment } from '../lib/env';
import { createProgress } from '../lib/progress';
import { pipelineSettings, spawnService } from '../lib/service';
import { DEFAULT_DATA_DIR, loadLocomo, loadLongMemEval, loadScifact } from './datasets';
import { LONGMEMEVAL_HEADING, longMemEvalMarkdown, qualityMarkdown, qualityTargets, rankingDefaults, REFERENCES, spliceSection, type QualityReport } from './report';
import { DEFAULT_ALPHAS, qualityConfigs, runQuality, type QualityRun } from './run-quality';

const USAGE = `npm run bench:quality -- [options]
  --embedder glove|use|all   offline embedder(s), one service run each (default all)
  --dataset scifact,locomo,longmemeval|all  one or several, comma-separated (default all)
  --scifact-split test|train SciFact queries to score (default test; train is for tuning)
  --alpha 0,0.2,0.3,0.5,0.7,1  hybrid alphas to sweep (default as shown; "none" for no sweep)
  --concurrency 4            queries in flight
  --ingest-concurrency 2     LongMemEval question databases ingested at once
  --data-dir <dir>           benchmark data (default ${DEFAULT_DATA_DIR})
  --out <dir>                where results go (default bench/results)
  --name <name>              result file base name (default quality)
  --merge <report.json>      keep the runs of an earlier report for the embedders not run now (each keeps its commit)
  --section-into <file.md>   also put the LongMemEval section (self-contained: commit, machine, split) into that
                             report, in place of its LongMemEval section or at the end; the rest is kept as it is
  --smoke                    tiny slices (20 SciFact docs + 5 queries, one LoCoMo slice, two LongMemEval questions)`;

const DATASETS = ['scifact', 'locomo', 'longmemeval'];

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), { embedder: 'string', dataset: 'string', alpha: 'string', concurrency: 'string', 'data-dir': 'string', out: 'string', name: 'string', merge: 'string', 'scifact-split': 'string', 'ingest-concurrency': 'string', 'section-into': 'string', smoke: 'boolean', help: 'boolean' });
  if (args.help) return void console.log(USAGE);
  const root = resolve(__dirname, '../../..');
  const embedders = String(args.embedder ?? 'all') === 'all' ? ['glove', 'use'] : String(args.embedder).split(',');
  for (const e of embedders) if (!['glove', 'use'].includes(e)) throw new Error(`unknown embedder ${e} (glove, use)`);
  const dataset = String(args.dataset ?? 'all');
  const datasets = dataset === 'all' ? DATASETS : dataset.split(',').map((d) => d.trim());
  for (const d of datasets) if (!DATASETS.includes(d)) throw new Error(`unknown dataset ${d} (${DATASETS.join(', ')}, all)`);
  const alphas = args.alpha === 'none' ? [] : args.alpha ? numberList(String(args.alpha)) : DEFAULT_ALPHAS;
  for (const a of alphas) if (a < 0 || a > 1) throw new Error(`alpha ${a} is outside 0..1`);
  const dataDir = String(args['data-dir'] ?? DEFAULT_DATA_DIR);
  if (resolve(dataDir).includes('holdout')) throw new Error('the holdout data is never used for benchmarking or tuning');
  const outDir = resolve(String(args.out ?? join(root, 'bench/results')));
  const name = String(args.name ?? (args.smoke ? 'quality-smoke' : 'quality'));
  const concurrency = Number(args.concurrency ?? 4);
  const ingestConcurrency = Number(args['ingest-concurrency'] ?? 2);
  if (!(Number.isInteger(ingestConcurrency) && ingestConcurrency >= 1)) throw new Error('--ingest-concurrency must be a positive integer');
  const sectionInto = args['section-into'] ? resolve(String(args['section-into'])) : undefined;
  if (sectionInto && !datasets.includes('longmemeval')) throw new Error('--section-into writes the LongMemEval section: add longmemeval to --dataset');
  const smoke = Boolean(args.smoke);

  const environment = runEnvironment(root);
  const split = String(args['scifact-split'] ?? 'test');
  if (split !== 'test' && split !== 'train') throw new Error(`unknown SciFact split ${split} (test, train)`);
  const scifact = datasets.includes('scifact') ? loadScifact(dataDir, smoke ? { docs: 20, queries: 5 } : undefined, split) : undefined;
  const locomo = datasets.includes('locomo') ? loadLocomo(dataDir, smoke ? { conversations: 1, turns: 40, questions: 10 } : undefined) : undefined;
  const longmemeval = datasets.includes('longmemeval') ? loadLongMemEval(dataDir, smoke ? { questions: 2, fillers: 6 } : undefined) : undefined;
  const configs = qualityConfigs(alphas);
  const progress = createProgress();
  const runs: QualityRun[] = [];
  if (args.merge) {
    const earlier = JSON.parse(readFileSync(resolve(String(args.merge)), 'utf8')) as QualityReport;
    for (const r of earlier.runs) if (!embedders.includes(r.embedder)) runs.push({ ...r, environment: r.environment ?? earlier.environment });
  }
  const configuration = {
    embedders,
    datasets: dataset === 'all' ? 'all' : datasets.join(','),
    scifactSplit: split,
    ...(longmemeval ? { longmemevalSplit: 'dev', ingestConcurrency } : {}),
    alphas,
    concurrency,
    smoke,
    dataDir,
    service: `node dist/apps/api/src/main.js, embedded Postgres + LanceDB, defaults (${pipelineSettings()}, CHUNK_TOKENS ${process.env.CHUNK_TOKENS ?? 512})`,
    configs: configs.map((c) => ({ name: c.name, body: c.body })),
  };
  const write = () => {
    const report: QualityReport = { kind: 'quality', environment, configuration, runs, references: REFERENCES, targets: qualityTargets(runs), finishedAt: new Date().toISOString() };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(outDir, `${name}.md`), `${qualityMarkdown(report)}\n`);
    const section = longMemEvalMarkdown(report);
    if (sectionInto && section) writeFileSync(sectionInto, spliceSection(readFileSync(sectionInto, 'utf8'), section, LONGMEMEVAL_HEADING));
  };
  for (const embedder of embedders) {
    progress.log(`== ${embedder}: starting the service`);
    const service = await spawnService({ root, env: embedder === 'use' ? { EMBEDDINGS_PROVIDER: 'use' } : {} });
    progress.log(`service pid ${service.pid} on ${service.baseUrl}, DATA_DIR ${service.dataDir}`);
    try {
      const runEnv = runEnvironment(root);
      runs.push({ ...(await runQuality(service, { embedder, configs, scifact, locomo, longmemeval, concurrency, ingestConcurrency, progress })), environment: runEnv, defaults: rankingDefaults() });
      runs.sort((a, b) => ['glove', 'use'].indexOf(a.embedder) - ['glove', 'use'].indexOf(b.embedder));
    } finally {
      await service.stop();
    }
    write(); // partial results survive a later failure
  }
  progress.stop();
  write();
  console.log(`results: ${join(outDir, `${name}.md`)} and .json`);
  console.log(qualityMarkdown({ kind: 'quality', environment, configuration, runs, references: REFERENCES, targets: qualityTargets(runs), finishedAt: '' }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
