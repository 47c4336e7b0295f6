import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from '../lib/args';
import { CrsClient } from '../lib/client';
import { runEnvironment } from '../lib/env';
import { cpuBetween, sampleCpu, type CpuBreakdown } from '../lib/proc';
import { benchKey, spawnService } from '../lib/service';
import { runLoad, type LoadResult } from './load';
import { resetPgStatements, topPgStatements } from './pg-stats';
import { bodyGenerator, SCENARIOS, TARGET_SCENARIO, type Scenario } from './run-speed';

const USAGE = `node dist/bench/speed/ab.main.js --data-dir <DATA_DIR kept by bench:speed --keep-data> --variants <spec>[;<spec>...] [options]
  --variants "base=/path/to/other/checkout;new=."
                        each variant is name=root[,KEY=VALUE...]: the built service of that checkout (its dist/),
                        with these environment settings; e.g. "pool30=.,RETRIEVAL_POOL_MIN=30;pool20=.,RETRIEVAL_POOL_MIN=20"
  --scenario "<name>"   query scenario (default "${TARGET_SCENARIO}")
  --rounds 2            rounds; each round runs every variant once, in turn (A B A B ...), so drift hits all alike
  --duration 10         seconds of load per variant and round
  --warmup 3            seconds of uncounted load first, per variant and round (longer when a variant has start-up
                        work to finish first, such as a read model rebuilt after its tables changed shape)
  --connections 1       concurrent clients
  --seed 42
  --pg-statements       run Postgres with pg_stat_statements and print each variant's heaviest statements per query
  --steps               print each variant's mean wall ms per query in each /query step (/metrics crs_query_step_*)
  --profile <dir>       write a V8 CPU profile of each service process (warm-up included) into <dir>/<variant>-<round>/
Each variant runs on its own copy of the data directory (a variant may migrate its tables at start), as a fresh
service process with a bootstrap key of its own (a new prefix: the kept data's key is not known); the first queries after start (the same count for every variant) warm it up and are not counted.
Prints p50 / p95 / p99 / req/s and CPU per query (service JS thread, its other threads, Postgres) per variant and
round: side by side, in one run, on the same data.`;

export interface Variant {
  name: string;
  root: string;
  env: Record<string, string>;
}

export function parseVariants(spec: string): Variant[] {
  return spec.split(';').filter(Boolean).map((part) => {
    const [head, ...settings] = part.split(',');
    const eq = head.indexOf('=');
    if (eq <= 0) throw new Error(`bad variant ${part}: want name=root[,KEY=VALUE...]`);
    const env: Record<string, string> = {};
    for (const s of settings) {
      const i = s.indexOf('=');
      if (i <= 0) throw new Error(`bad setting ${s} in variant ${part}`);
      env[s.slice(0, i)] = s.slice(i + 1);
    }
    const root = resolve(head.slice(eq + 1));
    if (!existsSync(join(root, 'dist/apps/api/src/main.js'))) throw new Error(`${root} has no build (dist/apps/api/src/main.js): run npm run build there`);
    return { name: head.slice(0, eq), root, env };
  });
}

export interface AbResult {
  round: number;
  variant: string;
  load: LoadResult;
  cpu: CpuBreakdown;
}

export interface AbOptions {
  /** a DATA_DIR with the embedded Postgres under it (bench:speed --keep-data); copied per variant, never changed */
  dataDir: string;
  variants: Variant[];
  scenario: Scenario;
  rounds: number;
  durationS: number;
  /** seconds of warm-up load per variant and round, not counted (default 3) */
  warmupS?: number;
  connections: number;
  seed: number;
  /** print the heaviest Postgres statements of each measured load (pg_stat_statements) */
  pgStatements?: boolean;
  /** print the mean wall ms per query of each /query step the service counts */
  steps?: boolean;
  /** a directory for a V8 CPU profile of each service process, one folder per variant and round */
  profileDir?: string;
  log?: (line: string) => void;
}

/** The query load of one scenario on each variant in turn, round after round, each on its own copy of the data. */
export async function runAb(opts: AbOptions): Promise<AbResult[]> {
  const log = opts.log ?? (() => undefined);
  const copies = new Map<string, string>();
  const results: AbResult[] = [];
  try {
    for (const v of opts.variants) {
      const dir = join(tmpdir(), `crs-ab-${v.name}-${process.pid}`);
      rmSync(dir, { recursive: true, force: true });
      copies.set(v.name, dir);
      // cp -a: the embedded Postgres refuses a data directory whose owner or mode changed (it runs as its own user under root).
      execFileSync('cp', ['-a', opts.dataDir, dir]);
      rmSync(join(dir, 'postgres', 'postmaster.pid'), { force: true });
    }
    for (let round = 1; round <= opts.rounds; round++) {
      for (const v of opts.variants) {
        const nodeFlags = opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(resolve(opts.profileDir), `${v.name}-${round}`)}`] : [];
        const service = await spawnService({ root: v.root, dataDir: copies.get(v.name)!, key: benchKey(`ab_${randomBytes(6).toString('hex')}`), nodeFlags, env: { ...v.env, ...(opts.pgStatements ? { POSTGRES_STAT_STATEMENTS: 'true' } : {}) } });
        try {
          const client = new CrsClient(service.baseUrl, service.key);
          const headers = client.headers;
          const load = (seed: number, durationS: number) => {
            const gen = bodyGenerator(opts.scenario, seed);
            return runLoad({ url: service.baseUrl, path: '/query', headers, nextBody: () => JSON.stringify(gen()), connections: opts.connections, durationS });
          };
          // Warm-up: the same seeded texts for every variant, then the measured texts (also the same for all).
          await load(opts.seed * 1000 + 900, opts.warmupS ?? 3);
          const statements = opts.pgStatements && (await resetPgStatements(service.databaseUrl()));
          const stepsBefore = opts.steps ? await client.querySteps() : {};
          const before = sampleCpu(service.pid!);
          const measured = await load(opts.seed * 1000 + round, opts.durationS);
          const cpu = cpuBetween(before, sampleCpu(service.pid!));
          if (measured.non2xx || measured.errors) throw new Error(`${v.name}: ${measured.non2xx} non-2xx, ${measured.errors} errors (log: ${copies.get(v.name)}/service.log)`);
          results.push({ round, variant: v.name, load: measured, cpu });
          const l = measured.latencyMs;
          const per = (x: number) => ((x * 1000) / measured.requests).toFixed(1);
          log(
            `round ${round} ${v.name.padEnd(12)} p50 ${l.p50.toFixed(1)}  p95 ${l.p95.toFixed(1)}  p99 ${l.p99.toFixed(1)} ms  ${measured.rps.toFixed(1)} req/s (${measured.requests} requests); ` +
              `CPU ms per query: JS thread ${per(cpu.jsThreadS)}, other threads ${per(cpu.otherThreadsS)}, Postgres ${per(cpu.postgresS)}`,
          );
          if (opts.steps) {
            const after = await client.querySteps();
            const means = Object.entries(after).map(([step, t]) => `${step} ${(((t.seconds - (stepsBefore[step]?.seconds ?? 0)) * 1000) / measured.requests).toFixed(2)}`);
            log(`  ${v.name} steps (mean ms per query): ${means.join(', ')}`);
          }
          if (statements) {
            for (const st of await topPgStatements(service.databaseUrl(), 12)) {
              log(`  ${v.name}: ${(st.calls / measured.requests).toFixed(2)} calls, ${(st.totalMs / measured.requests).toFixed(2)} ms per query (mean ${st.meanMs} ms): ${st.query}`);
            }
          }
        } finally {
          await service.stop();
        }
      }
    }
  } catch (error) {
    // The copies go below: keep the service logs of the failed run beside them, to read afterwards.
    for (const dir of copies.values()) if (existsSync(join(dir, 'service.log'))) execFileSync('cp', [join(dir, 'service.log'), `${dir}.service.log`]);
    throw error;
  } finally {
    for (const dir of copies.values()) rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

/** The side-by-side table: one row per variant, one cell per round. */
export function abMarkdown(variants: Variant[], rounds: number, results: AbResult[]): string {
  const lines = [
    '| variant | ' + Array.from({ length: rounds }, (_, i) => `round ${i + 1}: p50 / p99 ms, CPU ms per query`).join(' | ') + ' |',
    '| --- | ' + Array.from({ length: rounds }, () => '---').join(' | ') + ' |',
  ];
  for (const v of variants) {
    const cells = results
      .filter((r) => r.variant === v.name)
      .map((r) => `${r.load.latencyMs.p50.toFixed(1)} / ${r.load.latencyMs.p99.toFixed(1)}, ${(((r.cpu.jsThreadS + r.cpu.otherThreadsS + r.cpu.postgresS) * 1000) / r.load.requests).toFixed(1)}`);
    lines.push(`| ${v.name} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), { 'data-dir': 'string', variants: 'string', scenario: 'string', rounds: 'string', duration: 'string', connections: 'string', seed: 'string', 'pg-statements': 'boolean', steps: 'boolean', profile: 'string', warmup: 'string', help: 'boolean' });
  if (args.help || !args['data-dir'] || !args.variants) return void console.log(USAGE);
  const dataDir = resolve(String(args['data-dir']));
  const variants = parseVariants(String(args.variants));
  const scenario = SCENARIOS.find((s) => s.name === String(args.scenario ?? TARGET_SCENARIO));
  if (!scenario) throw new Error(`unknown scenario; one of: ${SCENARIOS.map((s) => s.name).join('; ')}`);
  const rounds = Number(args.rounds ?? 2);
  const durationS = Number(args.duration ?? 10);
  const connections = Number(args.connections ?? 1);
  const env = runEnvironment(resolve(__dirname, '../../..'));
  console.log(`A/B on ${dataDir}: scenario "${scenario.name}", ${rounds} round(s) of ${durationS} s, ${connections} client(s); ${env.machine.cores} cores (${env.machine.cpu}), load ${env.machine.loadAverageAtStart.join(' / ')}, commit ${env.commit.slice(0, 12)}${env.dirty ? ' (dirty)' : ''}`);
  const results = await runAb({ dataDir, variants, scenario, rounds, durationS, warmupS: args.warmup === undefined ? undefined : Number(args.warmup), connections, seed: Number(args.seed ?? 42), pgStatements: Boolean(args['pg-statements']), steps: Boolean(args.steps), profileDir: args.profile ? String(args.profile) : undefined, log: (l) => console.log(l) });
  console.log(`\n${abMarkdown(variants, rounds, results)}`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
