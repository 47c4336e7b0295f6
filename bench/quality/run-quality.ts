import { CrsClient, mapPool, type QueryBody } from '../lib/client';
import type { Progress } from '../lib/progress';
import type { ServiceHandle } from '../lib/service';
import { distinctIds, latencySummary, mean, ndcgAtK, recallAtK, round } from '../lib/stats';
import { LOCOMO_CATEGORIES, type LocomoConversation, type Scifact } from './datasets';

/** One way of querying the service, compared side by side. */
export interface QualityConfig {
  name: string;
  label: string;
  /** What the config adds to every /query body. */
  body: Partial<QueryBody>;
  /** Part of the alpha sweep (hybrid with an explicit alpha). */
  sweep?: number;
}

export const DEFAULT_ALPHAS = [0, 0.2, 0.3, 0.5, 0.7, 1];

/** keyword only, vector only, hybrid (default alpha), thinking mode, then hybrid at each swept alpha. */
export function qualityConfigs(alphas: number[] = DEFAULT_ALPHAS): QualityConfig[] {
  return [
    { name: 'keyword', label: 'keyword only (query_by "text")', body: { query_by: 'text' } },
    { name: 'vector', label: 'vector only (alpha 1)', body: { alpha: 1 } },
    { name: 'hybrid', label: 'hybrid (default alpha)', body: {} },
    { name: 'thinking', label: 'hybrid, mode "thinking"', body: { mode: 'thinking' } },
    ...alphas.map((a) => ({ name: `alpha=${a}`, label: `hybrid alpha ${a}`, body: { alpha: a }, sweep: a })),
  ];
}

export interface IngestTiming {
  items: number;
  chunks: number;
  /** ms from the first ingest request to the last response */
  requestsMs: number;
  /** ms from the first ingest request until every item is completed */
  completedMs: number;
}

export interface ScifactConfigResult {
  config: string;
  label: string;
  body: Partial<QueryBody>;
  sweep?: number;
  queries: number;
  ndcg10: number;
  recall100: number;
  /** mean number of distinct documents among the 10 chunks returned (documents with several chunks can repeat) */
  distinctDocsIn10: number;
  distinctDocsIn100: number;
  latencyMs: ReturnType<typeof latencySummary>;
}

export interface ScifactResult {
  database: string;
  docs: number;
  queries: number;
  ingest: IngestTiming;
  results: ScifactConfigResult[];
}

export interface LocomoConfigResult {
  config: string;
  label: string;
  body: Partial<QueryBody>;
  sweep?: number;
  questions: number;
  /** k → { overall, byCategory: { '1 multi-hop': ... } }, recall in percent */
  recall: Record<string, { overall: number; byCategory: Record<string, number> }>;
  latencyMs: ReturnType<typeof latencySummary>;
}

export interface LocomoResult {
  conversations: { id: string; database: string; turns: number; questions: number; ingest: IngestTiming }[];
  questions: number;
  questionsByCategory: Record<string, number>;
  ks: number[];
  results: LocomoConfigResult[];
}

export interface QualityRunOptions {
  embedder: string;
  configs: QualityConfig[];
  scifact?: Scifact;
  locomo?: LocomoConversation[];
  ks?: number[];
  /** Queries in flight at once (default 4). */
  concurrency?: number;
  progress: Progress;
}

export interface QualityRun {
  embedder: string;
  modelId: string;
  dimensions: number;
  scifact?: ScifactResult;
  locomo?: LocomoResult;
  /** commit, machine and start time of this embedder's run (runs merged from an earlier report keep theirs) */
  environment?: import('../lib/env').RunEnvironment;
  /** requests retried after a 5xx or a network error (0 in a clean run) */
  retries: number;
  wallMs: number;
  /** the ranking defaults the service ran with (default alpha, thinking weights); runs merged from an earlier report may lack them */
  defaults?: RankingDefaults;
}

export interface RankingDefaults {
  alpha: number;
  thinking: Record<string, number>;
}

const INGEST_BATCH = 500;

/** Runs the quality benchmarks against one running service: ingest through the API, wait until indexed, query every config. */
export async function runQuality(service: ServiceHandle, opts: QualityRunOptions): Promise<QualityRun> {
  const started = Date.now();
  const client = new CrsClient(service.baseUrl, service.key);
  const run: QualityRun = { embedder: opts.embedder, modelId: '', dimensions: 0, retries: 0, wallMs: 0 };
  if (opts.scifact) run.scifact = await runScifact(client, opts.scifact, opts);
  if (opts.locomo) run.locomo = await runLocomo(client, opts.locomo, opts);
  const db = run.scifact?.database ?? run.locomo?.conversations[0]?.database;
  if (db) {
    const stats = await client.stats(db);
    run.modelId = stats.embedder.model;
    run.dimensions = stats.embedder.dimensions;
  }
  run.retries = client.retries;
  run.wallMs = Date.now() - started;
  return run;
}

export async function ingestAndWait(
  client: CrsClient,
  database: string,
  count: number,
  send: (start: number, end: number) => Promise<{ success_count: number; failed_count: number }>,
  ids: string[],
  progress: Progress,
  label: string,
): Promise<IngestTiming> {
  const started = Date.now();
  const sent = progress.bar(`${label}: ingest`, count);
  for (let start = 0; start < count; start += INGEST_BATCH) {
    const end = Math.min(count, start + INGEST_BATCH);
    const res = await send(start, end);
    if (res.failed_count) throw new Error(`${label}: ${res.failed_count} item(s) failed at ingest`);
    sent.update(end);
  }
  sent.stop();
  const requestsMs = Date.now() - started;
  const indexed = progress.bar(`${label}: indexed`, ids.length);
  await client.waitForIds(database, ids, { statuses: ['completed'], onProgress: (n) => indexed.update(n) });
  indexed.stop();
  const completedMs = Date.now() - started;
  const stats = await client.stats(database);
  return { items: count, chunks: stats.chunks.total, requestsMs, completedMs };
}

async function runScifact(client: CrsClient, data: Scifact, opts: QualityRunOptions): Promise<ScifactResult> {
  const database = 'scifact';
  await client.createDatabase(database);
  const ingest = await ingestAndWait(
    client,
    database,
    data.docs.length,
    (s, e) => client.ingestKnowledge(database, data.docs.slice(s, e).map((d) => ({ id: d.id, ...(d.title ? { title: d.title } : {}), content: { text: d.text } }))),
    data.docs.map((d) => d.id),
    opts.progress,
    'SciFact',
  );
  const results: ScifactConfigResult[] = [];
  const bar = opts.progress.bar('SciFact: queries', opts.configs.length * data.queries.length);
  for (const config of opts.configs) {
    const latencies: number[] = [];
    const perQuery = await mapPool(data.queries, opts.concurrency ?? 4, async (q) => {
      const ask = async (max: number) => {
        const t = performance.now();
        const chunks = await client.query({ database, query: q.text, type: 'knowledge', max_results: max, ...config.body });
        latencies.push(performance.now() - t);
        return distinctIds(chunks.map((c) => c.id));
      };
      const top10 = await ask(10);
      const top100 = await ask(100);
      bar.increment();
      return { ndcg: ndcgAtK(top10, q.relevant, 10), recall: recallAtK(top100, new Set([...q.relevant].filter(([, g]) => g > 0).map(([id]) => id)), 100), d10: top10.length, d100: top100.length };
    });
    results.push({
      config: config.name,
      label: config.label,
      body: config.body,
      ...(config.sweep !== undefined ? { sweep: config.sweep } : {}),
      queries: perQuery.length,
      ndcg10: round(mean(perQuery.map((r) => r.ndcg))),
      recall100: round(mean(perQuery.map((r) => r.recall))),
      distinctDocsIn10: round(mean(perQuery.map((r) => r.d10)), 2),
      distinctDocsIn100: round(mean(perQuery.map((r) => r.d100)), 2),
      latencyMs: latencySummary(latencies),
    });
    opts.progress.log(`SciFact ${opts.embedder} ${config.name}: nDCG@10 ${results.at(-1)!.ndcg10}, R@100 ${results.at(-1)!.recall100}`);
  }
  bar.stop();
  return { database, docs: data.docs.length, queries: data.queries.length, ingest, results };
}

async function runLocomo(client: CrsClient, conversations: LocomoConversation[], opts: QualityRunOptions): Promise<LocomoResult> {
  const ks = opts.ks ?? [5, 10, 25, 50];
  const convs: LocomoResult['conversations'] = [];
  // One database per conversation: isolated tables, so keyword statistics never mix conversations.
  for (const conv of conversations) {
    const database = `locomo-${conv.id}`.replace(/[^A-Za-z0-9_-]/g, '-');
    await client.createDatabase(database);
    const ingest = await ingestAndWait(
      client,
      database,
      conv.turns.length,
      (s, e) =>
        client.ingestMemories(
          database,
          conv.turns.slice(s, e).map((t) => ({ id: t.id, text: t.text, additional_metadata: { session: t.session, ...(t.dateTime ? { session_date_time: t.dateTime } : {}) } })),
        ),
      conv.turns.map((t) => t.id),
      opts.progress,
      `LoCoMo ${conv.id}`,
    );
    convs.push({ id: conv.id, database, turns: conv.turns.length, questions: conv.questions.length, ingest });
  }
  const questions = conversations.flatMap((c, i) => c.questions.map((q) => ({ ...q, database: convs[i].database })));
  const category = (c: number) => `${c} ${LOCOMO_CATEGORIES[c] ?? 'unknown'}`;
  const questionsByCategory: Record<string, number> = {};
  for (const q of questions) questionsByCategory[category(q.category)] = (questionsByCategory[category(q.category)] ?? 0) + 1;
  const results: LocomoConfigResult[] = [];
  const bar = opts.progress.bar('LoCoMo: queries', opts.configs.length * questions.length);
  for (const config of opts.configs) {
    const latencies: number[] = [];
    const perQuestion = await mapPool(questions, opts.concurrency ?? 4, async (q) => {
      const byK: Record<number, number> = {};
      for (const k of ks) {
        const t = performance.now();
        const chunks = await client.query({ database: q.database, query: q.question, type: 'memory', max_results: k, ...config.body });
        latencies.push(performance.now() - t);
        byK[k] = recallAtK(distinctIds(chunks.map((c) => c.id)), new Set(q.evidence), k);
      }
      bar.increment();
      return { category: category(q.category), byK };
    });
    const recall: LocomoConfigResult['recall'] = {};
    for (const k of ks) {
      const byCategory: Record<string, number> = {};
      for (const cat of Object.keys(questionsByCategory).sort()) byCategory[cat] = round(100 * mean(perQuestion.filter((r) => r.category === cat).map((r) => r.byK[k])), 2);
      recall[String(k)] = { overall: round(100 * mean(perQuestion.map((r) => r.byK[k])), 2), byCategory };
    }
    results.push({ config: config.name, label: config.label, body: config.body, ...(config.sweep !== undefined ? { sweep: config.sweep } : {}), questions: questions.length, recall, latencyMs: latencySummary(latencies) });
    opts.progress.log(`LoCoMo ${opts.embedder} ${config.name}: ${ks.map((k) => `R@${k} ${recall[String(k)].overall}`).join(', ')}`);
  }
  bar.stop();
  return { conversations: convs, questions: questions.length, questionsByCategory, ks, results };
}
