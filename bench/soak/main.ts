import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from '../lib/args';
import { runEnvironment } from '../lib/env';
import { createProgress } from '../lib/progress';
import { spawnService } from '../lib/service';
import { soakMarkdown, soakTargets } from './report';
import { processRss, runSoak } from './run-soak';

const USAGE = `npm run bench:soak -- [options]
  --minutes 20          length of the load
  --clients 16          concurrent clients
  --seed-memories 5000  memories made searchable before the load
  --mix 0.8,0.15        shares of queries and ingests (the rest are status reads)
  --batch 5             memories per ingest request
  --sample 60           seconds per sample window
  --settle 120          seconds the service idles after the pipeline finished, before the disk is measured
  --seed 7              text and operation seed
  --env K=V,...         extra environment for the service (settings to compare)
  --out <dir>           where results go (default bench/results)
  --name <name>         result file base name (default soak)
  --keep-data           keep the service's DATA_DIR (its Postgres, engine tables and service.log) after the run;
                        a failed run keeps it anyway, so its log can say why
  --smoke               1 minute, 4 clients, 200 seed memories, 10-second windows`;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), {
    minutes: 'string', clients: 'string', 'seed-memories': 'string', mix: 'string', batch: 'string', sample: 'string', settle: 'string', seed: 'string', env: 'string', out: 'string', name: 'string', 'keep-data': 'boolean', smoke: 'boolean', help: 'boolean',
  });
  if (args.help) return void console.log(USAGE);
  const root = resolve(__dirname, '../../..');
  const smoke = Boolean(args.smoke);
  const num = (name: string, fallback: number) => {
    const v = args[name] === undefined ? fallback : Number(args[name]);
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number`);
    return v;
  };
  const [query, ingest] = String(args.mix ?? '0.8,0.15').split(',').map(Number);
  if (!(query >= 0 && ingest >= 0 && query + ingest <= 1)) throw new Error('--mix: two shares, query and ingest, adding up to at most 1');
  const env = Object.fromEntries(
    String(args.env ?? '')
      .split(',')
      .filter(Boolean)
      .map((kv) => {
        const at = kv.indexOf('=');
        if (at <= 0) throw new Error(`--env: ${kv} is not K=V`);
        return [kv.slice(0, at), kv.slice(at + 1)];
      }),
  );
  const environment = runEnvironment(root);
  const progress = createProgress();
  const dataDir = mkdtempSync(join(tmpdir(), 'crs-soak-'));
  const service = await spawnService({ root, env, dataDir });
  let keep = Boolean(args['keep-data']);
  progress.log(`service pid ${service.pid} on ${service.baseUrl}, DATA_DIR ${service.dataDir}`);
  const outDir = resolve(String(args.out ?? join(root, 'bench/results')));
  const name = String(args.name ?? (smoke ? 'soak-smoke' : 'soak'));
  try {
    const result = await runSoak(service, {
      clients: num('clients', smoke ? 4 : 16),
      durationS: num('minutes', smoke ? 1 : 20) * 60,
      seedMemories: num('seed-memories', smoke ? 200 : 5000),
      mix: { query, ingest },
      memoriesPerIngest: num('batch', 5),
      sampleS: num('sample', smoke ? 10 : 60),
      settleS: num('settle', smoke ? 5 : 120),
      seed: num('seed', 7),
      progress,
      serviceRss: () => processRss(service.pid!),
    });
    progress.stop();
    const args = process.argv.slice(2);
    const command = args.length ? `npm run bench:soak -- ${args.join(' ')}` : 'npm run bench:soak';
    mkdirSync(outDir, { recursive: true });
    const report = { kind: 'soak', environment, serviceEnv: env, result, targets: soakTargets(result), finishedAt: new Date().toISOString() };
    writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
    const md = soakMarkdown(result, environment, command) + (Object.keys(env).length ? `\nService settings: ${Object.entries(env).map(([k, v]) => `\`${k}=${v}\``).join(', ')}\n` : '');
    writeFileSync(join(outDir, `${name}.md`), md);
    console.log(md);
    console.log(`results: ${join(outDir, `${name}.md`)} and .json`);
  } catch (err) {
    keep = true;
    throw err;
  } finally {
    await service.stop();
    if (keep) console.error(`DATA_DIR kept: ${dataDir} (service log: ${join(dataDir, 'service.log')})`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
