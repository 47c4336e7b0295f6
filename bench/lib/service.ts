import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PIPELINE_DEFAULTS } from '@crs/config';

/** The pipeline settings a spawned service runs with (its defaults unless the environment overrides them), for reports. */
export function pipelineSettings(env: NodeJS.ProcessEnv = process.env): string {
  return `PIPELINE_CONCURRENCY ${env.PIPELINE_CONCURRENCY ?? PIPELINE_DEFAULTS.concurrency}, PIPELINE_BATCH_SIZE ${env.PIPELINE_BATCH_SIZE ?? PIPELINE_DEFAULTS.batchSize}`;
}

/** A running service the benchmarks talk to over HTTP (a child process, or an in-process app in the smoke tests). */
export interface ServiceHandle {
  baseUrl: string;
  key: string;
  dataDir: string;
  /** Postgres URL of the service (the embedded one under dataDir, or the one it was given). */
  databaseUrl(): string;
  /** Child process id (undefined when in-process). */
  pid?: number;
  /** Epoch ms when the process was started (the time origin of a --cpu-prof profile). */
  startedAt: number;
  /** The env the service runs with (for the CLI: same DATA_DIR / DATABASE_URL / embedder). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface SpawnServiceOptions {
  /** Repository root (holds dist/). Default: the current directory. */
  root?: string;
  /** Extra environment (EMBEDDINGS_PROVIDER=use, ...). */
  env?: Record<string, string>;
  /** Extra node flags, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof']. */
  nodeFlags?: string[];
  /** Where the service's stdout/stderr go (default `<dataDir>/service.log`). */
  logFile?: string;
  /** Keep the data directory after stop (default false; always kept when `dataDir` is given). */
  keepData?: boolean;
  /** Reuse this data directory (created if missing) instead of a fresh temporary one, e.g. to restart on ingested data. */
  dataDir?: string;
  /** Bootstrap API key (default a random one; pass the earlier key when reusing a data directory). */
  key?: string;
  startTimeoutMs?: number;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

/** A fresh bootstrap key; a new `prefix` when the data directory already holds a key of the default prefix (its secret differs). */
export const benchKey = (prefix = 'bench_key') => `${prefix}.${randomBytes(24).toString('hex')}`;

/** The embedded Postgres URL of a data directory: `<dataDir>/postgres/postmaster.pid` line 4 is the port. */
export function embeddedPostgresUrl(dataDir: string): string {
  const pid = join(dataDir, 'postgres', 'postmaster.pid');
  const port = Number(readFileSync(pid, 'utf8').split('\n')[3]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no port in ${pid}`);
  return `postgresql://crs:crs-embedded@127.0.0.1:${port}/crs`;
}

/**
 * Starts the built service (`node dist/apps/api/src/main.js`) as a separate process on a fresh data directory
 * (embedded Postgres, LanceDB) and a free port, and resolves once it prints "listening on" and /health answers.
 */
export async function spawnService(opts: SpawnServiceOptions = {}): Promise<ServiceHandle> {
  const root = resolve(opts.root ?? process.cwd());
  const main = join(root, 'dist/apps/api/src/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
  const dataDir = opts.dataDir ? resolve(opts.dataDir) : mkdtempSync(join(tmpdir(), 'crs-bench-'));
  if (opts.dataDir) mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
  const key = opts.key ?? benchKey();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    BOOTSTRAP_API_KEY: key,
    LOG_LEVEL: 'warn',
    ...(opts.env ?? {}),
  };
  // As `npm start` and the container image run it: two malloc arenas and a 1 GiB JavaScript heap limit
  // (docs/operations.md), unless the caller says otherwise.
  const childEnv: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: '2', NODE_OPTIONS: '--max-old-space-size=1024', ...process.env, ...env };
  delete childEnv.DATABASE_URL; // always the embedded default unless the caller passes one in opts.env
  if (opts.env?.DATABASE_URL) childEnv.DATABASE_URL = opts.env.DATABASE_URL;
  const logFile = opts.logFile ?? join(dataDir, 'service.log');
  const log = createWriteStream(logFile, { flags: 'a' });
  const startedAt = Date.now();
  const child: ChildProcess = spawn(process.execPath, [...(opts.nodeFlags ?? []), main], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

  let out = '';
  const ready = new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start within ${opts.startTimeoutMs ?? 120_000} ms (log: ${logFile})`)), opts.startTimeoutMs ?? 120_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      if (out.includes('listening on')) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolveReady();
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening (log: ${logFile})\n${out.slice(-2000)}`));
    });
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(t);
    }
    log.end();
    if (!opts.keepData && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await ready;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await fetch(`${baseUrl}/health`).catch(() => null);
      if (res?.status === 200) break;
      if (Date.now() > deadline) throw new Error('/health did not answer 200');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    baseUrl,
    key,
    dataDir,
    pid: child.pid,
    startedAt,
    env,
    databaseUrl: () => opts.env?.DATABASE_URL ?? embeddedPostgresUrl(dataDir),
    stop,
  };
}
