import type { ProfileSummary } from '../lib/cpuprofile';
import { environmentMarkdown, type RunEnvironment } from '../lib/env';
import { candidatePool, POOL_DEFAULTS } from '@crs/domain/retrieval/pool-size';
import { FLOOR_POOL } from './floor';
import type { LoadResult } from './load';
import { TARGET_SCENARIO, type SpeedRun } from './run-speed';

export const SPEED_TARGETS = { queryP50Ms: 25, queryP99Ms: 100, targetChunks: 100_000, ingestMemoriesPerSecond: 300, rebuildEventsPerSecond: 5000 };

export interface SpeedSizeResult {
  run: SpeedRun;
  profile?: { file: string; summaries: ProfileSummary[] };
}

export interface SpeedReport {
  kind: 'speed';
  environment: RunEnvironment;
  configuration: Record<string, unknown>;
  sizes: SpeedSizeResult[];
  targets: ReturnType<typeof speedTargets>;
  finishedAt: string;
}

export function speedTargets(sizes: SpeedSizeResult[]) {
  const at100k = sizes.find((s) => s.run.size >= SPEED_TARGETS.targetChunks);
  const largest = [...sizes].sort((a, b) => b.run.size - a.run.size)[0];
  const q = (s?: SpeedSizeResult) => s?.run.scenarios.find((x) => x.scenario.name === TARGET_SCENARIO)?.service['1']?.latencyMs;
  const latencyOf = at100k ?? largest;
  const lat = q(latencyOf);
  const mem = largest?.run.ingest.find((p) => p.kind === 'memories');
  const rebuild = largest?.run.rebuild;
  return {
    query: {
      target: `p50 ≤ ${SPEED_TARGETS.queryP50Ms} ms and p99 ≤ ${SPEED_TARGETS.queryP99Ms} ms, "${TARGET_SCENARIO}", 1 client, at ${SPEED_TARGETS.targetChunks} chunks`,
      measuredAtChunks: latencyOf?.run.chunks.total ?? null,
      sizeReached: Boolean(at100k),
      p50: lat?.p50 ?? null,
      p99: lat?.p99 ?? null,
      met: lat ? lat.p50 <= SPEED_TARGETS.queryP50Ms && lat.p99 <= SPEED_TARGETS.queryP99Ms : null,
    },
    ingest: { target: `≥ ${SPEED_TARGETS.ingestMemoriesPerSecond} memories/s to searchable`, measured: mem?.itemsPerSecondSearchable ?? null, met: mem ? mem.itemsPerSecondSearchable >= SPEED_TARGETS.ingestMemoriesPerSecond : null },
    // Log events, each counted once, over the whole rebuild (every read model and the search index in turn).
    rebuild: {
      target: `≥ ${SPEED_TARGETS.rebuildEventsPerSecond} events/s`,
      logEvents: rebuild?.log.events ?? null,
      whole: rebuild?.whole.logEventsPerSecond ?? null,
      readModels: rebuild?.readModels.logEventsPerSecond ?? null,
      searchIndex: rebuild?.projections.find((p) => p.projection === 'search-index')?.logEventsPerSecond ?? null,
      met: rebuild ? rebuild.whole.logEventsPerSecond >= SPEED_TARGETS.rebuildEventsPerSecond : null,
    },
  };
}

function table(header: string[], rows: (string | number)[][]): string {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const n1 = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(1));
const loadRow = (label: string, c: string, r: LoadResult | undefined, extra = ''): (string | number)[] =>
  r ? [label, c, r.requests, n1(r.rps), n1(r.latencyMs.p50), n1(r.latencyMs.p95), n1(r.latencyMs.p99), extra] : [label, c, '—', '—', '—', '—', '—', extra];

export function speedMarkdown(report: SpeedReport): string {
  const out: string[] = ['# Speed (through the HTTP API)', '', environmentMarkdown(report.environment)];
  out.push(`- configuration: ${Object.entries(report.configuration).map(([k, v]) => `${k} = \`${JSON.stringify(v)}\``).join(', ')}`);
  out.push(
    '- method: the built service runs as a separate process (embedded Postgres + LanceDB under a fresh DATA_DIR, GloVe-SIF default embedder); a seeded',
    '  generator makes memories, Markdown documents (uploaded as files) and app items with ACLs and metadata; each kind is ingested through',
    '  `POST /context/ingest` and timed from the first request until `/databases/stats` counts every item searchable (graph_creation or completed) and completed.',
    '  Query load: autocannon against 127.0.0.1, each request a fresh seeded query text; latencies are every response time autocannon saw.',
    '  Floors under the same load: a minimal Fastify route answering a fixed JSON, and one running the same LanceDB full-text + vector searches',
    `  (same prefilter, same candidate pool per call as the service (${FLOOR_POOL} for 10 results, ${candidatePool(POOL_DEFAULTS, 50)} for 50), query embedded with the same GloVe-SIF code) straight on the service's tables, in a separate process;`,
    '  plus the same engine calls in-process without HTTP. CPU split from /proc: service main (JS) thread, its other threads (LanceDB/tokio, libuv, GC), Postgres.',
    '',
  );
  const t = report.targets;
  out.push('## Targets', '');
  out.push(
    table(
      ['target', 'measured', 'verdict'],
      [
        [
          t.query.target,
          t.query.p50 === null ? '—' : `p50 ${n1(t.query.p50)} ms, p99 ${n1(t.query.p99)} ms at ${t.query.measuredAtChunks} chunks`,
          t.query.met === null ? 'not measured' : `${t.query.met ? 'met' : `missed: p50 ${(t.query.p50! / 25).toFixed(1)}× / p99 ${(t.query.p99! / 100).toFixed(1)}× the target`}${t.query.sizeReached ? '' : ' (100k not run; measured at the largest size run)'}`,
        ],
        [t.ingest.target, `${n1(t.ingest.measured)} memories/s`, t.ingest.met === null ? 'not measured' : t.ingest.met ? 'met' : `missed: ${(SPEED_TARGETS.ingestMemoriesPerSecond / t.ingest.measured!).toFixed(2)}× too slow, ${Math.round(100 - (100 * t.ingest.measured!) / SPEED_TARGETS.ingestMemoriesPerSecond)}% short`],
        [
          t.rebuild.target,
          t.rebuild.whole === null
            ? '—'
            : `whole rebuild ${t.rebuild.whole} log events/s (${t.rebuild.logEvents} events, each counted once); read models alone ${t.rebuild.readModels} log events/s, search index alone ${t.rebuild.searchIndex ?? '—'}`,
          t.rebuild.met === null ? 'not measured' : t.rebuild.met ? 'met (whole rebuild)' : `missed: ${(SPEED_TARGETS.rebuildEventsPerSecond / t.rebuild.whole!).toFixed(1)}× too slow`,
        ],
      ],
    ),
    '',
  );

  for (const { run, profile } of report.sizes) {
    out.push(`## ${run.size.toLocaleString('en-US')} chunks (target)`, '');
    out.push(
      `Corpus (seed ${run.seed}): ${run.corpus.memories} memories, ${run.corpus.documents} Markdown documents, ${run.corpus.apps} app items; ` +
        `indexed ${run.chunks.total} chunks (${run.chunks.memory} memory, ${run.chunks.knowledge} knowledge). Whole size run: ${(run.wallMs / 60000).toFixed(1)} min.`,
      '',
    );
    out.push('### Ingest', '');
    out.push(
      table(
        ['kind', 'items', 'chunks', 'requests (items each)', 'accepted items/s', 'searchable items/s', 'completed items/s', 'chunks/s searchable', 'wall s', 'CPU s: JS thread / other threads / Postgres', 'per item: Postgres commits / rows written, LanceDB commits'],
        run.ingest.map((p) => [
          p.kind,
          p.items,
          p.chunks,
          `${p.requests} (${p.itemsPerRequest})`,
          n1(p.itemsPerSecondAccepted),
          n1(p.itemsPerSecondSearchable),
          n1(p.itemsPerSecondCompleted),
          n1(p.chunksPerSecondSearchable),
          n1(p.searchableMs / 1000),
          p.cpu ? `${p.cpu.jsThreadS} / ${p.cpu.otherThreadsS} / ${p.cpu.postgresS}` : '—',
          p.postgres ? `${p.postgres.commitsPerItem} / ${round1(p.postgres.rowsInsertedPerItem + p.postgres.rowsUpdatedPerItem + p.postgres.rowsDeletedPerItem)}, ${p.lanceCommitsPerItem ?? '—'}` : '—',
        ]),
      ),
      '',
    );
    const stepped = run.ingest.filter((p) => p.pipelineMsPerItem && Object.keys(p.pipelineMsPerItem).length);
    if (stepped.length) {
      out.push('Indexing pipeline, wall ms per item in each step as the service counts it (`/metrics` crs_pipeline_step_seconds_total; batches overlap, so steps can add up to more than the wall time):', '');
      for (const p of stepped) out.push(`- ${p.kind}: ${Object.entries(p.pipelineMsPerItem!).map(([step, ms]) => `${step} ${ms}`).join(', ')}`);
      out.push('');
    }
    for (const p of run.ingest.filter((x) => x.pgStatements?.length)) {
      out.push(`Heaviest Postgres statements while ingesting ${p.kind} (pg_stat_statements, execution time; per item = total / ${p.items} items):`, '');
      out.push(
        table(
          ['statement', 'calls', 'total ms', 'mean ms', 'ms per item', 'rows'],
          p.pgStatements!.map((st) => [`\`${st.query.replace(/\|/g, '\\|').replace(/`/g, "'")}\``, st.calls, st.totalMs, st.meanMs, Math.round((st.totalMs / p.items) * 100) / 100, st.rows]),
        ),
        '',
      );
    }
    if (run.lanceCommitsAfterIngest) out.push(`LanceDB table versions after ingest (one per commit; superseded ones are removed SEARCH_VERSION_RETENTION_SECONDS after, at the next optimize): ${Object.entries(run.lanceCommitsAfterIngest).map(([t, n]) => `${t.replace(/_[0-9a-f]{32}_/, '_<db>_')} ${n}`).join(', ')}.`, '');
    if (run.scenarios.length) out.push('### Query latency (ms; autocannon, 127.0.0.1)', '');
    const rows: (string | number)[][] = [];
    for (const [c, r] of Object.entries(run.fixedJson)) rows.push(loadRow('floor: Fastify fixed JSON', c, r));
    for (const s of run.scenarios) {
      for (const c of Object.keys(s.service)) {
        rows.push(loadRow(`service: ${s.scenario.name}`, c, s.service[c], `${s.preflightMeanChunks} chunks/answer`));
        if (s.engineHttp?.[c]) {
          const o = s.overhead![c];
          rows.push(loadRow(`floor: engine via Fastify, ${s.scenario.name}`, c, s.engineHttp[c], `service/floor: p50 ${o.p50Ratio}×, p99 ${o.p99Ratio}×, req/s ${o.rpsRatio}×`));
        }
        if (s.engineInProcess?.[c]) {
          const e = s.engineInProcess[c];
          rows.push([`floor: engine in-process, ${s.scenario.name}`, c, e.requests, n1(e.rps), n1(e.latencyMs.p50), n1(e.latencyMs.p95), n1(e.latencyMs.p99), `${e.meanCandidates} candidates/query`]);
        }
      }
    }
    if (rows.length) out.push(table(['what', 'clients', 'requests', 'req/s', 'p50', 'p95', 'p99', 'notes'], rows), '');
    const bd = run.scenarios.flatMap((x) => (x.breakdown ?? []).map((b) => ({ name: x.scenario.name, b })));
    if (bd.length) {
      out.push('Where one query\'s time goes (medians of 20 sequential queries, 1 client; server = `meta.latency_ms`, retrieval = the `latencyMs` the service records in QueryRecorded, engine = the same query on the in-process engine floor):', '');
      out.push(
        table(
          ['scenario', 'graph_context', 'client', 'server', 'retrieval', 'engine floor', 'HTTP + serialisation (client − server)', 'auth, validation, QueryRecorded append ‖ graph context (server − retrieval)', 'retrieval beyond the engine (embedding, read-model check, fusion; thinking: graph expansion)'],
          bd.map(({ name, b }) => [name, String(b.graphContext), n1(b.clientMs), n1(b.serverMs), n1(b.retrievalMs), n1(b.engineMs), n1(b.split.httpMs), n1(b.split.authValidationRecordMs), n1(b.split.retrievalBeyondEngineMs)]),
        ),
        '',
      );
      const withSteps = bd.filter(({ b }) => b.stepsMs && Object.keys(b.stepsMs).length);
      if (withSteps.length) {
        out.push('The same queries as the service counts them (`/metrics` crs_query_step_seconds_total / _calls_total): mean wall ms per query in each step. Steps overlap: the engine calls of both stores, the conversation context and the graph entities run in parallel; `record` (the QueryRecorded append) runs alongside `graph.context`.', '');
        for (const { name, b } of withSteps) out.push(`- ${name}${b.graphContext ? '' : ' (graph_context false)'}: ${Object.entries(b.stepsMs!).map(([step, ms]) => `${step} ${n1(ms)}`).join(', ')}`);
        out.push('');
      }
    }
    if (run.queryCpu) out.push(`CPU during the query phase (${run.queryCpu.wallS} s, service + floors): JS thread ${run.queryCpu.jsThreadS} s, other threads ${run.queryCpu.otherThreadsS} s, Postgres ${run.queryCpu.postgresS} s.`, '');
    if (run.rebuild) {
      const r = run.rebuild;
      out.push('### Projection rebuild (`crs projections rebuild all`, against the running service)', '');
      out.push(
        `The log up to position ${r.log.position} holds ${r.log.events} events. Each projection replays it in turn and handles only its own event types, ` +
          'so one log event is handled by several projections: a projection\'s handled events/s is its own rate, and the log events/s rows count each log event once.',
        '',
        table(
          ['projection', 'handled events', 'ms', 'handled events/s', 'log events/s (this pass)'],
          [
            ...r.projections.map((p) => [p.projection + (p.indexes !== undefined ? ` (${p.indexes} indexes)` : ''), p.events, p.ms, p.eventsPerSecond, p.logEventsPerSecond]),
            ['**whole rebuild** (every projection in turn)', '', r.whole.ms, '', `**${r.whole.logEventsPerSecond}**`],
            ['read models alone (without the search index)', '', r.readModels.ms, '', r.readModels.logEventsPerSecond],
          ],
        ),
        '',
        `CLI process wall time ${(r.wallMs / 1000).toFixed(1)} s (start-up included).${r.cpu ? ` Service Postgres CPU during it: ${r.cpu.postgresS} s.` : ''}`,
        '',
      );
    }
    if (profile) {
      out.push(`### CPU profile of the service (main thread, \`node --cpu-prof\`; ${profile.file})`, '');
      for (const s of profile.summaries.filter((x) => x.sampledMs > 0)) {
        out.push(`**${s.window}** (${(s.sampledMs / 1000).toFixed(1)} s sampled, main thread busy ${(s.busyShare * 100).toFixed(0)}%): by package/file — ${s.byCategory.slice(0, 10).map((c) => `${c.category} ${(c.share * 100).toFixed(0)}%`).join(', ')}`, '');
        out.push(table(['top self time (function, file:line)', 'ms', 'share of busy'], s.byFunction.slice(0, 12).map((f) => [`\`${f.fn}\``, f.ms, `${(f.share * 100).toFixed(1)}%`])), '');
      }
    }
  }
  return out.join('\n');
}
