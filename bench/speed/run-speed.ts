import { join } from 'node:path';
import { CrsClient, mapPool, sleep, type QueryBody } from '../lib/client';
import { cpuBetween, sampleCpu, type CpuBreakdown } from '../lib/proc';
import type { Progress } from '../lib/progress';
import type { ServiceHandle } from '../lib/service';
import { round } from '../lib/stats';
import { generateCorpus, SPEED_METADATA_SCHEMA, TEAMS, TextGenerator, USERS, type CorpusShares, type SpeedCorpus } from './corpus';
import { EngineFloor, findTables, measureEngineInProcess, type InProcessResult, spawnFloorServer, startFloorServer, type FloorServer } from './floor';
import { runLoad, type LoadResult } from './load';
import { countersPerItem, lanceCommits, pgCounters, recordedQueryLatencies, resetPgStatements, topPgStatements, type PgStatement } from './pg-stats';
import type { RebuildResult } from './rebuild';
import { percentile } from '../lib/stats';

export interface SpeedOptions {
  /** Target chunk count of the corpus. */
  size: number;
  seed?: number;
  /** Seconds per load run (default 10). */
  durationS?: number;
  /** Concurrent clients per scenario (default [1, 16]). */
  connections?: number[];
  /** Ingest requests in flight (default 2). */
  ingestConcurrency?: number;
  /** Only these scenarios (names); default all. */
  scenarios?: string[];
  /** Floor server as a child process (real runs) or in this process (smoke tests). */
  floor: 'child' | 'inprocess';
  /** Repository root (for the child floor server). */
  root: string;
  /** Runs `crs projections rebuild all` against the service (the CLI as a process, or in-process in tests). */
  rebuild: (service: ServiceHandle) => Promise<RebuildResult>;
  progress: Progress;
  /** pid whose process tree is sampled for CPU time (the service); undefined when in-process. */
  servicePid?: number;
  /** Stop after ingest (no query load, no rebuild). */
  ingestOnly?: boolean;
  /** Record each ingest phase's heaviest Postgres statements (the service must run with POSTGRES_STAT_STATEMENTS=true). */
  pgStatements?: boolean;
  /** Share of the chunks each kind makes up (default DEFAULT_SHARES); memories only gives a conversation-sized database. */
  shares?: CorpusShares;
}

export interface IngestPhase {
  kind: 'memories' | 'documents' | 'apps';
  items: number;
  chunks: number;
  requests: number;
  itemsPerRequest: number;
  bytes: number;
  /** ms from the first request to the last response */
  requestsMs: number;
  /** ms from the first request until every item of the phase is searchable (graph_creation or completed) */
  searchableMs: number;
  /** ms from the first request until every item is completed */
  completedMs: number;
  itemsPerSecondAccepted: number;
  itemsPerSecondSearchable: number;
  itemsPerSecondCompleted: number;
  chunksPerSecondSearchable: number;
  cpu?: CpuBreakdown;
  /** Postgres activity of the phase divided by its items (pg_stat_database of the service's database) */
  postgres?: ReturnType<typeof countersPerItem>;
  /** LanceDB commits (new table versions) of the phase per item */
  lanceCommitsPerItem?: number;
  /** the service's own account of its indexing pipeline during the phase: wall ms per item in each step (batches overlap) */
  pipelineMsPerItem?: Record<string, number>;
  /** the phase's heaviest Postgres statements (with --pg-statements) */
  pgStatements?: PgStatement[];
}

/** Where the time of one query goes (medians over sequential queries, 1 client). */
export interface QueryBreakdown {
  queries: number;
  graphContext: boolean;
  /** what the client measured */
  clientMs: number;
  /** meta.latency_ms: from the service's request start to the envelope (auth, validation, query, record) */
  serverMs: number;
  /** QueryRecorded.latencyMs: QueryService.run up to the ranked results (retrieval, read-model check; the graph context runs alongside the append, after it) */
  retrievalMs: number;
  /** the same query on the engine floor in-process (embed + LanceDB full-text and vector searches) */
  engineMs: number;
  /** medians of the per-query differences */
  split: { httpMs: number; authValidationRecordMs: number; retrievalBeyondEngineMs: number };
  /** mean wall ms per query in each step as the service counts them (crs_query_step_*; steps overlap) */
  stepsMs?: Record<string, number>;
}

export interface Scenario {
  name: string;
  mode: 'fast' | 'thinking';
  type: 'memory' | 'knowledge' | 'all';
  acl: boolean;
  metadata: boolean;
  /** also measured on the floor (engine straight, no service) */
  floor: boolean;
  /** `max_results` of every query (10 when absent); the engine floor uses the service's pool for it */
  maxResults?: number;
}

export const SCENARIOS: Scenario[] = [
  { name: 'fast memory', mode: 'fast', type: 'memory', acl: false, metadata: false, floor: true },
  { name: 'fast memory +metadata', mode: 'fast', type: 'memory', acl: false, metadata: true, floor: false },
  { name: 'fast knowledge', mode: 'fast', type: 'knowledge', acl: false, metadata: false, floor: false },
  { name: 'fast knowledge +acl', mode: 'fast', type: 'knowledge', acl: true, metadata: false, floor: false },
  { name: 'fast knowledge +acl +metadata', mode: 'fast', type: 'knowledge', acl: true, metadata: true, floor: false },
  { name: 'fast all', mode: 'fast', type: 'all', acl: false, metadata: false, floor: true },
  { name: 'fast all +acl +metadata', mode: 'fast', type: 'all', acl: true, metadata: true, floor: true },
  { name: 'thinking all', mode: 'thinking', type: 'all', acl: false, metadata: false, floor: false },
  { name: 'thinking all +acl +metadata', mode: 'thinking', type: 'all', acl: true, metadata: true, floor: false },
  // Last, so the scenarios before keep their seeds (a scenario's queries are seeded by its place among those run).
  { name: 'fast memory top50', mode: 'fast', type: 'memory', acl: false, metadata: false, floor: true, maxResults: 50 },
  { name: 'fast all +acl +metadata top50', mode: 'fast', type: 'all', acl: true, metadata: true, floor: true, maxResults: 50 },
];

/** The scenario the latency target is about: fast hybrid with filters. */
export const TARGET_SCENARIO = 'fast all +acl +metadata';

export interface ScenarioResult {
  scenario: Scenario;
  example: QueryBody;
  /** mean chunks returned by a few pre-flight queries (sanity: the filters leave something to find) */
  preflightMeanChunks: number;
  service: Record<string, LoadResult>;
  /** the engine floor behind a minimal Fastify route, same autocannon load */
  engineHttp?: Record<string, LoadResult>;
  /** the engine floor called in-process (no HTTP) */
  engineInProcess?: Record<string, InProcessResult>;
  breakdown?: QueryBreakdown[];
  /** service p50 / engine-route p50, per connection count */
  overhead?: Record<string, { p50Ratio: number; p99Ratio: number; rpsRatio: number }>;
}

export interface SpeedRun {
  size: number;
  seed: number;
  database: string;
  databaseId: string;
  corpus: { memories: number; documents: number; apps: number; estimatedChunks: SpeedCorpus['estimatedChunks']; generateMs: number };
  chunks: { memory: number; knowledge: number; total: number };
  ingest: IngestPhase[];
  fixedJson: Record<string, LoadResult>;
  scenarios: ScenarioResult[];
  rebuild?: RebuildResult & { cpu?: CpuBreakdown };
  /** wall-clock windows of each phase (epoch ms), to slice a CPU profile */
  phases: { name: string; start: number; end: number }[];
  queryCpu?: CpuBreakdown;
  /** LanceDB table versions after ingest (one per commit) */
  lanceCommitsAfterIngest?: Record<string, number>;
  wallMs: number;
}

const DATABASE = 'speed';

/** A /query body for a scenario, fresh text each call (seeded, so the floor gets the same sequence). */
export function bodyGenerator(s: Scenario, seed: number): () => QueryBody {
  const g = new TextGenerator(seed);
  return () => {
    const body: QueryBody = { database: DATABASE, query: g.query(), type: s.type, mode: s.mode, max_results: s.maxResults ?? 10 };
    if (s.acl) body.acl = [`user${Math.floor(g.random() * USERS)}@example.com`, `group:okta:${TEAMS[Math.floor(g.random() * TEAMS.length)]}`];
    if (s.metadata) {
      body.metadata_filters = { team: TEAMS[Math.floor(g.random() * TEAMS.length)] };
      if (s.type === 'memory') body.metadata_filters.additional_metadata = { source: 'chat' };
    }
    return body;
  };
}

export async function runSpeed(service: ServiceHandle, opts: SpeedOptions): Promise<SpeedRun> {
  const started = Date.now();
  const seed = opts.seed ?? 42;
  const durationS = opts.durationS ?? 10;
  const connections = opts.connections ?? [1, 16];
  const client = new CrsClient(service.baseUrl, service.key);
  const phases: SpeedRun['phases'] = [];
  const phase = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const start = Date.now();
    try {
      return await fn();
    } finally {
      phases.push({ name, start, end: Date.now() });
    }
  };
  const cpu = () => (opts.servicePid ? sampleCpu(opts.servicePid) : undefined);

  const g0 = Date.now();
  const corpus = generateCorpus(opts.size, seed, opts.shares);
  const generateMs = Date.now() - g0;
  opts.progress.log(`corpus for ${opts.size} chunks: ${corpus.memories.length} memories, ${corpus.documents.length} documents, ${corpus.apps.length} app items (estimated ${corpus.estimatedChunks.total} chunks, ${generateMs} ms)`);
  const databaseId = await client.createDatabase(DATABASE, { metadata_schema: SPEED_METADATA_SCHEMA });

  // Ingest, one kind after the other, each awaited until every item is completed.
  const ingest: IngestPhase[] = [];
  const kinds: { kind: IngestPhase['kind']; store: 'memory' | 'knowledge'; batches: (() => Promise<{ success_count: number; failed_count: number }>)[]; items: number; bytes: number }[] = [
    {
      kind: 'memories',
      store: 'memory',
      items: corpus.memories.length,
      bytes: corpus.memories.reduce((a, m) => a + Buffer.byteLength(m.text), 0),
      batches: batchesOf(corpus.memories, 500).map((b) => () => client.ingestMemories(DATABASE, b)),
    },
    {
      kind: 'documents',
      store: 'knowledge',
      items: corpus.documents.length,
      bytes: corpus.documents.reduce((a, d) => a + Buffer.byteLength(d.content), 0),
      batches: batchesOf(corpus.documents, 20).map(
        (b) => () =>
          client.ingestFiles(
            DATABASE,
            b.map((d) => ({ filename: d.filename, contentType: 'text/markdown', content: d.content, meta: { id: d.id, title: d.title, metadata: d.metadata, additional_metadata: d.additional_metadata, ...(d.acl ? { acl: d.acl } : {}) } })),
          ),
      ),
    },
    {
      kind: 'apps',
      store: 'knowledge',
      items: corpus.apps.length,
      bytes: corpus.apps.reduce((a, x) => a + Buffer.byteLength(x.content.text), 0),
      batches: batchesOf(corpus.apps, 500).map((b) => () => client.ingestKnowledge(DATABASE, b)),
    },
  ];
  for (const k of kinds) {
    if (!k.items) continue;
    ingest.push(await phase(`ingest ${k.kind}`, () => ingestPhase(client, k, opts, cpu, service)));
  }
  const stats = await client.stats(DATABASE);
  const chunks = { memory: stats.chunks.memory, knowledge: stats.chunks.knowledge, total: stats.chunks.total };
  opts.progress.log(`indexed: ${chunks.total} chunks (${chunks.memory} memory, ${chunks.knowledge} knowledge)`);
  await sleep(3000); // let the engine's background optimize fold the last writes in
  const lanceCommitsAfterIngest = lanceCommits(join(service.dataDir, 'lancedb'));
  const corpusInfo = { memories: corpus.memories.length, documents: corpus.documents.length, apps: corpus.apps.length, estimatedChunks: corpus.estimatedChunks, generateMs };
  if (opts.ingestOnly) {
    return { size: opts.size, seed, database: DATABASE, databaseId, corpus: corpusInfo, chunks, ingest, fixedJson: {}, scenarios: [], phases, lanceCommitsAfterIngest, wallMs: Date.now() - started };
  }

  // Floors: the engine straight (in a separate process behind a minimal Fastify route, and in-process), and a fixed JSON route.
  const tables = await findTables(join(service.dataDir, 'lancedb'), databaseId);
  const lanceDir = join(service.dataDir, 'lancedb');
  const floorServer: FloorServer = opts.floor === 'child' ? await spawnFloorServer(opts.root, { lanceDir, tables }) : await startFloorServer({ lanceDir, tables });
  const engine = await EngineFloor.open(lanceDir, tables);
  const scenarios = SCENARIOS.filter((s) => !opts.scenarios || opts.scenarios.includes(s.name));
  const runs = scenarios.length * connections.length + scenarios.filter((s) => s.floor).length * connections.length * 2 + connections.length;
  const bar = opts.progress.bar('query load runs', runs);
  const fixedJson: Record<string, LoadResult> = {};
  const results: ScenarioResult[] = [];
  const cpuQ0 = cpu();
  try {
    await phase('queries', async () => {
      const fixed = JSON.stringify({ query: 'fixed' });
      for (const c of connections) {
        fixedJson[c] = await runLoad({ url: floorServer.url, path: '/fixed', nextBody: () => fixed, connections: c, durationS });
        bar.increment();
      }
      for (const [i, s] of scenarios.entries()) {
        const scenarioSeed = seed * 1000 + i;
        const preflight = await mapPool(Array.from({ length: 5 }, bodyGenerator(s, scenarioSeed + 500)), 1, (b) => client.query(b));
        const result: ScenarioResult = { scenario: s, example: bodyGenerator(s, scenarioSeed)(), preflightMeanChunks: round(preflight.reduce((a, r) => a + r.length, 0) / preflight.length, 1), service: {} };
        result.breakdown = [await breakdown(client, engine, service, bodyGenerator(s, scenarioSeed + 700), true)];
        if (s.name === TARGET_SCENARIO) result.breakdown.push(await breakdown(client, engine, service, bodyGenerator(s, scenarioSeed + 700), false));
        for (const c of connections) {
          const gen = bodyGenerator(s, scenarioSeed);
          result.service[c] = await runLoad({ url: service.baseUrl, path: '/query', headers: client.headers, nextBody: () => JSON.stringify(gen()), connections: c, durationS });
          bar.increment();
          if (s.floor) {
            const same = bodyGenerator(s, scenarioSeed);
            (result.engineHttp ??= {})[c] = await runLoad({ url: floorServer.url, path: '/engine', nextBody: () => JSON.stringify(same()), connections: c, durationS });
            bar.increment();
            const again = bodyGenerator(s, scenarioSeed);
            (result.engineInProcess ??= {})[c] = await measureEngineInProcess(engine, again, c, durationS);
            bar.increment();
            const sv = result.service[c];
            const fl = result.engineHttp[c];
            (result.overhead ??= {})[c] = { p50Ratio: round(sv.latencyMs.p50 / fl.latencyMs.p50, 2), p99Ratio: round(sv.latencyMs.p99 / fl.latencyMs.p99, 2), rpsRatio: round(sv.rps / fl.rps, 3) };
          }
        }
        for (const c of connections) if (result.service[c].non2xx || result.service[c].errors) throw new Error(`${s.name} c=${c}: ${result.service[c].non2xx} non-2xx, ${result.service[c].errors} errors`);
        results.push(result);
        const one = result.service[connections[0]];
        opts.progress.log(`${s.name}: ${connections.map((c) => `c=${c} p50 ${result.service[c].latencyMs.p50} ms p99 ${result.service[c].latencyMs.p99} ms ${result.service[c].rps} req/s`).join('; ')}${result.engineHttp ? ` | engine floor c=${connections[0]} p50 ${result.engineHttp[connections[0]].latencyMs.p50} ms` : ''}${one.requests ? '' : ' (no requests!)'}`);
      }
    });
  } finally {
    bar.stop();
    engine.close();
    await floorServer.close();
  }
  const cpuQ1 = cpu();

  // Projection rebuild through the CLI, against the live service.
  const cpuR0 = cpu();
  const rebuild = await phase('rebuild', () => opts.rebuild(service));
  const cpuR1 = cpu();
  opts.progress.log(
    `rebuild: ${rebuild.log.events} log events, whole rebuild ${rebuild.whole.logEventsPerSecond} log events/s; ` +
      rebuild.projections.map((p) => `${p.projection} ${p.events} handled ${p.eventsPerSecond}/s`).join(', '),
  );

  return {
    size: opts.size,
    seed,
    database: DATABASE,
    databaseId,
    corpus: corpusInfo,
    chunks,
    ingest,
    fixedJson,
    scenarios: results,
    rebuild: { ...rebuild, ...(cpuR0 && cpuR1 ? { cpu: cpuBetween(cpuR0, cpuR1) } : {}) },
    phases,
    lanceCommitsAfterIngest,
    ...(cpuQ0 && cpuQ1 ? { queryCpu: cpuBetween(cpuQ0, cpuQ1) } : {}),
    wallMs: Date.now() - started,
  };
}

const BREAKDOWN_QUERIES = 20;

/** Sequential queries timed at the client, by the service (meta.latency_ms, QueryRecorded.latencyMs) and on the engine floor. */
async function breakdown(client: CrsClient, engine: EngineFloor, service: ServiceHandle, next: () => QueryBody, graphContext: boolean): Promise<QueryBreakdown> {
  const rows: { client: number; server: number; id: string; engine: number }[] = [];
  const steps0 = await client.querySteps();
  const serviceSteps = {} as Record<string, { seconds: number; items: number }>;
  for (let i = 0; i < BREAKDOWN_QUERIES; i++) {
    const body = next();
    const r = await client.queryTimed(graphContext ? body : { ...body, graph_context: false });
    const after = await client.querySteps(); // before the floor runs: only the service's own queries count
    for (const [step, v] of Object.entries(after)) {
      const prev = serviceSteps[step] ?? { seconds: 0, items: 0 };
      const base = steps0[step] ?? { seconds: 0, items: 0 };
      serviceSteps[step] = { seconds: prev.seconds + v.seconds - base.seconds, items: prev.items + v.items - base.items };
      steps0[step] = v;
    }
    const t = performance.now();
    await engine.search(body);
    rows.push({ client: r.clientMs, server: r.serverMs, id: r.requestId, engine: performance.now() - t });
  }
  const recorded = await recordedQueryLatencies(service.databaseUrl(), rows.map((r) => r.id));
  const ok = rows.filter((r) => recorded.has(r.id));
  const med = (xs: number[]) => round(percentile(xs, 50), 2);
  return {
    queries: ok.length,
    graphContext,
    clientMs: med(ok.map((r) => r.client)),
    serverMs: med(ok.map((r) => r.server)),
    retrievalMs: med(ok.map((r) => recorded.get(r.id)!)),
    engineMs: med(ok.map((r) => r.engine)),
    split: {
      httpMs: med(ok.map((r) => r.client - r.server)),
      authValidationRecordMs: med(ok.map((r) => r.server - recorded.get(r.id)!)),
      retrievalBeyondEngineMs: med(ok.map((r) => recorded.get(r.id)! - r.engine)),
    },
    stepsMs: Object.fromEntries(Object.entries(serviceSteps).filter(([, v]) => v.items > 0).map(([step, v]) => [step, round((v.seconds * 1000) / rows.length, 2)])),
  };
}

function batchesOf<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

async function ingestPhase(
  client: CrsClient,
  k: { kind: IngestPhase['kind']; store: 'memory' | 'knowledge'; batches: (() => Promise<{ success_count: number; failed_count: number }>)[]; items: number; bytes: number },
  opts: SpeedOptions,
  cpu: () => ReturnType<typeof sampleCpu> | undefined,
  service: ServiceHandle,
): Promise<IngestPhase> {
  const lanceDir = join(service.dataDir, 'lancedb');
  const sumCommits = () => Object.values(lanceCommits(lanceDir)).reduce((a, b) => a + b, 0);
  const statements = opts.pgStatements ? await resetPgStatements(service.databaseUrl()) : false;
  const pg0 = await pgCounters(service.databaseUrl());
  const lance0 = sumCommits();
  const steps0 = await client.pipelineSteps();
  const before = await client.stats(DATABASE);
  const base = before.items[k.store].by_status;
  const baseSearchable = (base.graph_creation ?? 0) + (base.completed ?? 0);
  const baseCompleted = base.completed ?? 0;
  const baseChunks = before.chunks[k.store];
  const sent = opts.progress.bar(`ingest ${k.kind}: accepted`, k.items);
  const indexed = opts.progress.bar(`ingest ${k.kind}: searchable`, k.items);
  const c0 = cpu();
  const t0 = Date.now();
  let requestsMs = 0;
  let accepted = 0;
  const sending = mapPool(k.batches, opts.ingestConcurrency ?? 2, async (send) => {
    const res = await send();
    if (res.failed_count) throw new Error(`ingest ${k.kind}: ${res.failed_count} item(s) failed`);
    accepted += res.success_count;
    sent.update(accepted);
  }).then(() => (requestsMs = Date.now() - t0));
  let searchableMs = 0;
  let completedMs = 0;
  let failure: unknown;
  sending.catch((e) => (failure = e));
  for (;;) {
    if (failure) throw failure;
    const st = (await client.stats(DATABASE)).items[k.store].by_status;
    if (st.errored) throw new Error(`ingest ${k.kind}: ${st.errored} item(s) errored`);
    const searchable = (st.graph_creation ?? 0) + (st.completed ?? 0) - baseSearchable;
    const completed = (st.completed ?? 0) - baseCompleted;
    indexed.update(searchable);
    const now = Date.now();
    if (!searchableMs && searchable >= k.items) searchableMs = now - t0;
    if (!completedMs && completed >= k.items) completedMs = now - t0;
    if (searchableMs && completedMs) break;
    await sleep(200);
  }
  await sending;
  const c1 = cpu();
  sent.stop();
  indexed.stop();
  await sleep(1500); // let the backends flush their statistics
  const pg1 = await pgCounters(service.databaseUrl());
  const pgStatements = statements ? await topPgStatements(service.databaseUrl()) : undefined;
  const lance1 = sumCommits();
  const steps1 = await client.pipelineSteps();
  const pipelineMsPerItem = Object.fromEntries(
    Object.entries(steps1)
      .map(([step, t]) => [step, t.seconds - (steps0[step]?.seconds ?? 0)] as const)
      .filter(([, seconds]) => seconds > 0)
      .map(([step, seconds]) => [step, round((seconds * 1000) / k.items, 2)]),
  );
  const after = await client.stats(DATABASE);
  const chunks = after.chunks[k.store] - baseChunks;
  return {
    kind: k.kind,
    items: k.items,
    chunks,
    requests: k.batches.length,
    itemsPerRequest: Math.ceil(k.items / k.batches.length),
    bytes: k.bytes,
    requestsMs,
    searchableMs,
    completedMs,
    itemsPerSecondAccepted: round(k.items / (requestsMs / 1000), 1),
    itemsPerSecondSearchable: round(k.items / (searchableMs / 1000), 1),
    itemsPerSecondCompleted: round(k.items / (completedMs / 1000), 1),
    chunksPerSecondSearchable: round(chunks / (searchableMs / 1000), 1),
    ...(c0 && c1 ? { cpu: cpuBetween(c0, c1) } : {}),
    postgres: countersPerItem(pg0, pg1, k.items),
    lanceCommitsPerItem: round((lance1 - lance0) / k.items, 2),
    pipelineMsPerItem,
    ...(pgStatements ? { pgStatements } : {}),
  };
}
