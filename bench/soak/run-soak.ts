import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { CrsClient, mapPool, sleep, type MemoryInput } from '../lib/client';
import type { Progress } from '../lib/progress';
import { pick, seededRandom } from '../lib/prng';
import { processTree, supported } from '../lib/proc';
import type { ServiceHandle } from '../lib/service';
import { latencySummary, percentile, round } from '../lib/stats';
import { TextGenerator } from '../speed/corpus';

/**
 * The soak: a steady mix of small writes and queries against one database for a fixed time, sampled every
 * `sampleS` seconds (requests, latency, errors, resident memory), then the disk each store holds once the service
 * has settled. What it shows is the steady state a long-lived service reaches, or fails to.
 */
export interface SoakOptions {
  clients: number;
  durationS: number;
  /** memories ingested (and made searchable) before the load starts */
  seedMemories: number;
  /** shares of the operations; the rest of 1 after query and ingest are status reads */
  mix: { query: number; ingest: number };
  memoriesPerIngest: number;
  sampleS: number;
  /** after the load: wait for the pipeline to finish, then this long for background maintenance */
  settleS: number;
  seed: number;
  progress: Progress;
  /** resident memory of the service (bytes): /proc for a child process, the process itself in-process */
  serviceRss: () => number;
}

export interface SoakSample {
  /** 1-based index of the sample window */
  window: number;
  requests: number;
  byKind: Record<OpKind, number>;
  p50: number;
  p99: number;
  queryP50: number;
  errors: number;
  /** the service's resident memory, mean of the readings taken every few seconds over the window (RSS_EVERY_MS) */
  serviceRssMiB: number;
  /** the highest of those readings */
  serviceRssMaxMiB: number;
  /** the service's JavaScript heap in use and its external (Buffer, native) memory, from /metrics */
  heapMiB: number;
  /** the JavaScript heap's pages held from the system (used or not): what of it is in the resident memory */
  heapCommittedMiB: number;
  externalMiB: number;
  /** of the resident memory, file pages mapped into the process (reclaimable by the kernel, not the process's own) */
  fileRssMiB: number;
  /** the search engine's caches (index pages and metadata), bounded by SEARCH_INDEX_CACHE_MB + SEARCH_METADATA_CACHE_MB */
  searchCacheMiB: number;
  postgresRssMiB: number;
  /** memories the service holds at the sample (items of the soak database, any status) */
  memories: number;
}

export interface StoreDisk {
  store: string;
  bytes: number;
  files: number;
}

export interface SoakResult {
  options: Omit<SoakOptions, 'progress' | 'serviceRss'>;
  samples: SoakSample[];
  totals: { requests: number; errors: number; firstErrors: string[]; latencyMs: ReturnType<typeof latencySummary> };
  memories: { seeded: number; ingested: number; total: number; meanChars: number };
  drainS: number;
  /** where the service's /query time went over the whole run: mean ms per call of each step (/metrics crs_query_step_*) */
  querySteps: { step: string; calls: number; meanMs: number }[];
  disk: StoreDisk[];
  postgresTables: { table: string; bytes: number; rows: number }[];
  /** events in the log by type, with their row bytes (pg_column_size of the whole row, before indexes and page overhead) */
  postgresEvents: { type: string; count: number; rowBytes: number }[];
  searchIndex: { versions: number; dataFiles: number; indexDirs: number };
}

type OpKind = 'query' | 'ingest' | 'status';
const DATABASE = 'soak';

export async function runSoak(service: ServiceHandle, opts: SoakOptions): Promise<SoakResult> {
  const client = new CrsClient(service.baseUrl, service.key);
  const { progress } = opts;
  const gen = new TextGenerator(opts.seed);
  const random = seededRandom(opts.seed + 1);
  let nextId = 0;
  let chars = 0;
  const memory = (): MemoryInput => {
    const text = gen.sentence(gen.topic());
    chars += text.length;
    return { id: `soak-${nextId++}`, text };
  };

  await client.createDatabase(DATABASE);
  const seedIds: string[] = [];
  const seedBatches = Array.from({ length: Math.ceil(opts.seedMemories / 100) }, (_, b) =>
    Array.from({ length: Math.min(100, opts.seedMemories - b * 100) }, memory),
  );
  const seedBar = progress.bar('seed memories searchable', opts.seedMemories);
  await mapPool(seedBatches, 2, async (batch) => {
    await client.ingestMemories(DATABASE, batch);
    seedIds.push(...batch.map((m) => m.id));
  });
  await client.waitForIds(DATABASE, seedIds, { statuses: ['graph_creation', 'completed'], onProgress: (n) => seedBar.update(n) });
  seedBar.stop();

  const recent: string[] = seedIds.slice(-100);
  const ingested: string[] = [];
  const samples: SoakSample[] = [];
  const firstErrors: string[] = [];
  const all: number[] = [];
  let window = { times: [] as number[], queryTimes: [] as number[], byKind: { query: 0, ingest: 0, status: 0 }, errors: 0, rss: [] as number[] };
  // One reading at a window's end lands anywhere in the garbage collector's cycle (the JS heap alone swings by 100-200
  // MiB between collections): a window's memory is the mean of readings every few seconds, and its peak is kept too.
  const rssTimer = setInterval(() => window.rss.push(opts.serviceRss()), RSS_EVERY_MS);
  let errors = 0;
  const started = Date.now();
  const end = started + opts.durationS * 1000;

  const op = async (kind: OpKind): Promise<void> => {
    if (kind === 'query') {
      await client.query({ database: DATABASE, query: gen.query(), type: 'memory', max_results: 10 });
    } else if (kind === 'ingest') {
      const batch = Array.from({ length: opts.memoriesPerIngest }, memory);
      const res = await client.ingestMemories(DATABASE, batch);
      if (res.failed_count !== 0) throw new Error(`ingest: ${res.failed_count} failed`);
      for (const m of batch) {
        ingested.push(m.id);
        recent.push(m.id);
      }
      if (recent.length > 1000) recent.splice(0, recent.length - 1000);
    } else {
      await client.statuses(DATABASE, Array.from({ length: 5 }, () => pick(random, recent)));
    }
  };
  const worker = async () => {
    while (Date.now() < end) {
      const r = random();
      const kind: OpKind = r < opts.mix.query ? 'query' : r < opts.mix.query + opts.mix.ingest ? 'ingest' : 'status';
      const t = performance.now();
      try {
        await op(kind);
      } catch (error) {
        errors++;
        window.errors++;
        if (firstErrors.length < 10) firstErrors.push(`${kind}: ${(error as Error).message.slice(0, 300)}`);
      }
      const ms = performance.now() - t;
      window.times.push(ms);
      all.push(ms);
      window.byKind[kind]++;
      if (kind === 'query') window.queryTimes.push(ms);
    }
  };
  const loadBar = progress.bar('soak (seconds)', opts.durationS);
  const windows = Math.max(1, Math.ceil(opts.durationS / opts.sampleS));
  const sample = async (n: number) => {
    const w = window;
    window = { times: [], queryTimes: [], byKind: { query: 0, ingest: 0, status: 0 }, errors: 0, rss: [] };
    const rss = [...w.rss, opts.serviceRss()];
    const memories = opts.seedMemories + ingested.length;
    const gauges = await metricGauges(service, ['crs_nodejs_heap_size_used_bytes', 'crs_nodejs_heap_size_total_bytes', 'crs_nodejs_external_memory_bytes', SEARCH_CACHE_GAUGE]).catch(() => ({}) as Record<string, number>);
    samples.push({
      window: n,
      requests: w.times.length,
      byKind: w.byKind,
      p50: round(percentile(w.times, 50), 1),
      p99: round(percentile(w.times, 99), 1),
      queryP50: round(percentile(w.queryTimes, 50), 1),
      errors: w.errors,
      serviceRssMiB: Math.round(rss.reduce((a, b) => a + b, 0) / rss.length / 2 ** 20),
      serviceRssMaxMiB: Math.round(Math.max(...rss) / 2 ** 20),
      heapMiB: Math.round((gauges.crs_nodejs_heap_size_used_bytes ?? 0) / 2 ** 20),
      heapCommittedMiB: Math.round((gauges.crs_nodejs_heap_size_total_bytes ?? 0) / 2 ** 20),
      externalMiB: Math.round((gauges.crs_nodejs_external_memory_bytes ?? 0) / 2 ** 20),
      fileRssMiB: Math.round(statusField(service.pid, 'RssFile') / 2 ** 20),
      searchCacheMiB: Math.round((gauges[SEARCH_CACHE_GAUGE] ?? 0) / 2 ** 20),
      postgresRssMiB: Math.round(postgresRss(service.pid) / 2 ** 20),
      memories,
    });
    loadBar.update(Math.round((Date.now() - started) / 1000));
    const s = samples[samples.length - 1];
    progress.log(`window ${n}: ${s.requests} requests, p50 ${s.p50} / p99 ${s.p99} ms, ${s.errors} errors, service ${s.serviceRssMiB} MiB, peak ${s.serviceRssMaxMiB} (heap ${s.heapMiB} of ${s.heapCommittedMiB}, external ${s.externalMiB}, file ${s.fileRssMiB}, search caches ${s.searchCacheMiB}), ${memories} memories`);
  };
  // Every window but the last closes on the clock; the last one once every client's final request has been answered.
  const sampler = (async () => {
    for (let n = 1; n < windows; n++) {
      await sleep(Math.max(0, started + n * opts.sampleS * 1000 - Date.now()));
      await sample(n);
    }
  })();
  await Promise.all([...Array.from({ length: opts.clients }, worker), sampler]);
  await sample(windows);
  clearInterval(rssTimer);
  loadBar.stop();
  const steps = await client.querySteps().catch(() => ({}) as Record<string, { seconds: number; items: number }>);
  const querySteps = Object.entries(steps)
    .filter(([, s]) => s.items > 0)
    .map(([step, s]) => ({ step, calls: s.items, meanMs: round((1000 * s.seconds) / s.items, 2) }))
    .sort((a, b) => b.meanMs * b.calls - a.meanMs * a.calls);

  const drainStarted = Date.now();
  const drainBar = progress.bar('ingested memories completed', ingested.length);
  await client.waitForIds(DATABASE, ingested, { statuses: ['completed'], onProgress: (n) => drainBar.update(n) });
  drainBar.stop();
  const drainS = round((Date.now() - drainStarted) / 1000, 1);
  await sleep(opts.settleS * 1000);

  const pg = new Client({ connectionString: service.databaseUrl() });
  await pg.connect();
  try {
    const tables = await pg.query<{ table: string; bytes: string; rows: string }>(
      `SELECT c.relname AS table, pg_total_relation_size(c.oid) AS bytes, c.reltuples::bigint AS rows
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC LIMIT 15`,
    );
    const events = await pg
      .query<{ type: string; count: string; bytes: string }>(`SELECT type, count(*) AS count, sum(pg_column_size(e.*)) AS bytes FROM events e GROUP BY type ORDER BY 2 DESC`)
      .catch(() => ({ rows: [] as { type: string; count: string; bytes: string }[] }));
    const disk = storeDisk(service.dataDir);
    return {
      options: { clients: opts.clients, durationS: opts.durationS, seedMemories: opts.seedMemories, mix: opts.mix, memoriesPerIngest: opts.memoriesPerIngest, sampleS: opts.sampleS, settleS: opts.settleS, seed: opts.seed },
      samples,
      totals: { requests: all.length, errors, firstErrors, latencyMs: latencySummary(all) },
      memories: { seeded: opts.seedMemories, ingested: ingested.length, total: opts.seedMemories + ingested.length, meanChars: round(chars / Math.max(1, nextId), 1) },
      drainS,
      querySteps,
      disk,
      postgresTables: tables.rows.map((r) => ({ table: r.table, bytes: Number(r.bytes), rows: Number(r.rows) })),
      postgresEvents: events.rows.map((r) => ({ type: r.type, count: Number(r.count), rowBytes: Number(r.bytes) })),
      searchIndex: lanceLayout(join(service.dataDir, 'lancedb')),
    };
  } finally {
    await pg.end();
  }
}

/** Unlabelled gauges of the service's /metrics. */
/** How often the service's resident memory is read within a window. */
const RSS_EVERY_MS = 5000;

const SEARCH_CACHE_GAUGE = 'crs_cache_bytes{cache="search_engine"}';

async function metricGauges(service: ServiceHandle, names: string[]): Promise<Record<string, number>> {
  const text = await (await fetch(`${service.baseUrl}/metrics`, { headers: { authorization: `Bearer ${service.key}` } })).text();
  const out: Record<string, number> = {};
  for (const name of names) {
    const m = new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} ([0-9.e+-]+)`, 'm').exec(text);
    if (m) out[name] = Number(m[1]);
  }
  return out;
}

/** Bytes on disk (allocated blocks) and files under a directory. */
export function du(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const walk = (d: string) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        try {
          bytes += statSync(p).blocks * 512;
          files++;
        } catch {
          // removed while walking
        }
      }
    }
  };
  walk(dir);
  return { bytes, files };
}

/** Each store's share of the data directory: Postgres (its write-ahead log apart), LanceDB, content blobs. */
export function storeDisk(dataDir: string): StoreDisk[] {
  const pgAll = du(join(dataDir, 'postgres'));
  const wal = du(join(dataDir, 'postgres', 'pg_wal'));
  const lance = du(join(dataDir, 'lancedb'));
  const blobs = du(join(dataDir, 'blobs'));
  return [
    { store: 'postgres (tables, indexes)', bytes: pgAll.bytes - wal.bytes, files: pgAll.files - wal.files },
    { store: 'postgres write-ahead log', ...wal },
    { store: 'search index (LanceDB)', ...lance },
    { store: 'content blobs', ...blobs },
  ];
}

/** Versions, data files and index directories of every LanceDB table under the directory. */
function lanceLayout(dir: string): SoakResult['searchIndex'] {
  const out = { versions: 0, dataFiles: 0, indexDirs: 0 };
  let tables: string[] = [];
  try {
    tables = readdirSync(dir).filter((n) => n.endsWith('.lance'));
  } catch {
    return out;
  }
  const count = (d: string) => {
    try {
      return readdirSync(d).length;
    } catch {
      return 0;
    }
  };
  for (const t of tables) {
    out.versions += count(join(dir, t, '_versions'));
    out.dataFiles += count(join(dir, t, 'data'));
    out.indexDirs += count(join(dir, t, '_indices'));
  }
  return out;
}

/** Resident memory of a process (bytes), from /proc; 0 when it cannot be read. */
export function processRss(pid: number): number {
  return statusField(pid, 'VmRSS');
}

/** A memory field of /proc/<pid>/status in bytes (0 when unknown). */
function statusField(pid: number | undefined, field: string): number {
  if (pid === undefined) return 0;
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Private resident memory (anonymous pages) of the Postgres processes under a process: shared buffers are counted
 * once, not once per backend as a plain sum of VmRSS would.
 */
function postgresRss(rootPid: number | undefined): number {
  if (rootPid === undefined || !supported()) return 0;
  const { procs, children } = processTree();
  let bytes = 0;
  const stack = [...(children.get(rootPid) ?? [])];
  while (stack.length) {
    const pid = stack.pop()!;
    if (procs.get(pid)?.comm.startsWith('postgres')) {
      try {
        const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (m) bytes += Number(m[1]) * 1024;
      } catch {
        // exited
      }
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return bytes;
}
