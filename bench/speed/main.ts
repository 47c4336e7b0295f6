import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { numberList, parseArgs } from '../lib/args';
import { summariseProfile } from '../lib/cpuprofile';
import { runEnvironment } from '../lib/env';
import { createProgress } from '../lib/progress';
import { pipelineSettings, spawnService } from '../lib/service';
import { logEventCount } from './pg-stats';
import { runRebuildCli } from './rebuild';
import { speedMarkdown, speedTargets, type SpeedReport, type SpeedSizeResult } from './report';
import { runSpeed, SCENARIOS } from './run-speed';

const USAGE = `npm run bench:speed -- [options]
  --size 10k|100k|1m|<n>    target chunk count (default 10k); comma-separated for several (each on a fresh service)
  --full                    10k and 100k
  --duration 10             seconds per load run
  --connections 1,16        concurrent clients per run
  --ingest-concurrency 2    ingest requests in flight
  --scenarios "<name>,..."  only these query scenarios (${SCENARIOS.map((s) => s.name).join('; ')})
  --seed 42                 corpus and query seed
  --corpus mixed|memories   mixed (default): 40% memories, 35% documents, 25% app items; memories: memories only, as
                            the turns of conversations (runs of 10-30 sharing user, session and topic), for a
                            conversation-sized database (--size 600 --corpus memories)
  --profile                 run the service under node --cpu-prof and summarise the profile per phase
  --pg-statements           run Postgres with pg_stat_statements and report each ingest phase's heaviest statements
  --ingest-only             stop after ingest (no query load, no rebuild)
  --keep-data               keep each size's DATA_DIR (printed; for engine experiments on the same data)
  --out <dir>               where results go (default bench/results)
  --name <name>             result file base name (default speed)
  --smoke                   200 chunks, 2-second runs`;

export function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([km]?)$/i.exec(s.trim());
  if (!m) throw new Error(`bad size ${s}`);
  return Math.round(Number(m[1]) * (m[2].toLowerCase() === 'k' ? 1e3 : m[2].toLowerCase() === 'm' ? 1e6 : 1));
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), {
    size: 'string', full: 'boolean', duration: 'string', connections: 'string', 'ingest-concurrency': 'string', scenarios: 'string', seed: 'string', corpus: 'string', profile: 'boolean', 'pg-statements': 'boolean', 'ingest-only': 'boolean', 'keep-data': 'boolean', out: 'string', name: 'string', smoke: 'boolean', help: 'boolean',
  });
  if (args.help) return void console.log(USAGE);
  const root = resolve(__dirname, '../../..');
  const smoke = Boolean(args.smoke);
  const sizes = args.size ? String(args.size).split(',').map(parseSize) : smoke ? [200] : args.full ? [10_000, 100_000] : [10_000];
  const durationS = Number(args.duration ?? (smoke ? 2 : 10));
  const connections = args.connections ? numberList(String(args.connections)) : [1, 16];
  const ingestConcurrency = Number(args['ingest-concurrency'] ?? 2);
  const seed = Number(args.seed ?? 42);
  const corpusKind = String(args.corpus ?? 'mixed');
  if (corpusKind !== 'mixed' && corpusKind !== 'memories') throw new Error(`unknown corpus ${corpusKind}: mixed or memories`);
  const shares = corpusKind === 'memories' ? { memories: 1, documents: 0, apps: 0, conversations: true } : undefined;
  const scenarios = args.scenarios ? String(args.scenarios).split(',').map((s) => s.trim()) : undefined;
  for (const s of scenarios ?? []) if (!SCENARIOS.some((x) => x.name === s)) throw new Error(`unknown scenario ${s}`);
  const outDir = resolve(String(args.out ?? join(root, 'bench/results')));
  const name = String(args.name ?? (smoke ? 'speed-smoke' : 'speed'));
  const profile = Boolean(args.profile);
  const pgStatements = Boolean(args['pg-statements']);
  const ingestOnly = Boolean(args['ingest-only']);
  const keepData = Boolean(args['keep-data']);
  const environment = runEnvironment(root);
  const configuration = {
    sizes,
    durationS,
    connections,
    ingestConcurrency,
    seed,
    corpus: corpusKind,
    scenarios: scenarios ?? 'all',
    profile,
    pgStatements,
    ingestOnly,
    service: `node dist/apps/api/src/main.js, embedded Postgres + LanceDB, defaults (glove embedder, ${pipelineSettings()}, CHUNK_TOKENS 512, LOG_LEVEL warn)`,
  };
  const progress = createProgress();
  const results: SpeedSizeResult[] = [];
  const write = () => {
    const report: SpeedReport = { kind: 'speed', environment, configuration, sizes: results, targets: speedTargets(results), finishedAt: new Date().toISOString() };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(outDir, `${name}.md`), `${speedMarkdown(report)}\n`);
    return report;
  };
  for (const size of sizes) {
    // Profiles are large: they stay in a temporary directory; the report keeps their summary and path.
    const profDir = join(tmpdir(), 'crs-bench-profiles', `${name}-${size}-${Date.now()}`);
    if (profile) mkdirSync(profDir, { recursive: true });
    progress.log(`== ${size} chunks: starting the service${profile ? ' (profiling)' : ''}`);
    const service = await spawnService({ root, nodeFlags: profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [], env: pgStatements ? { POSTGRES_STAT_STATEMENTS: 'true' } : {}, keepData });
    progress.log(`service pid ${service.pid} on ${service.baseUrl}, DATA_DIR ${service.dataDir}`);
    let run;
    try {
      run = await runSpeed(service, {
        size,
        seed,
        durationS,
        connections,
        ingestConcurrency,
        scenarios,
        floor: 'child',
        root,
        servicePid: service.pid,
        progress,
        ingestOnly,
        pgStatements,
        shares,
        rebuild: (s) => runRebuildCli(root, { DATABASE_URL: s.databaseUrl(), DATA_DIR: s.dataDir, LOG_LEVEL: 'warn' }, (upTo) => logEventCount(s.databaseUrl(), upTo)),
      });
    } finally {
      await service.stop();
      if (keepData) progress.log(`kept DATA_DIR ${service.dataDir}`);
    }
    const result: SpeedSizeResult = { run };
    if (profile) {
      const file = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(profDir, f))[0];
      if (file) result.profile = { file, summaries: summariseProfile(file, service.startedAt, run.phases) };
    }
    results.push(result);
    write();
  }
  progress.stop();
  const report = write();
  console.log(`results: ${join(outDir, `${name}.md`)} and .json`);
  console.log(speedMarkdown(report));
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
