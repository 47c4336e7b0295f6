import { CrsClient, mapPool, type QueryBody } from '../lib/client';
import type { Progress } from '../lib/progress';
import type { ServiceHandle } from '../lib/service';
import { createProgress } from '../lib/progress';
import { distinctIds, latencySummary, mean, ndcgAtK, ndcgAtKFirstTwoFull, recallAllAtK, recallAnyAtK, recallAtK, round } from '../lib/stats';
import { LOCOMO_CATEGORIES, type LocomoConversation, type LongMemEval, type Scifact } from './datasets';

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

/** LongMemEval's scores of one question or their means: recall_any / recall_all at 5 and 10, nDCG@10. */
export interface LongMemEvalScores {
  recallAny5: number;
  recallAll5: number;
  recallAny10: number;
  recallAll10: number;
  /** the benchmark's own nDCG@10 (ranks 1 and 2 undiscounted: `ndcgAtKFirstTwoFull`) */
  ndcg10: number;
  /** trec_eval's nDCG@10 (log2(rank + 1) discount), as the SciFact figures use */
  ndcg10Trec: number;
}

export interface LongMemEvalQuestionResult extends LongMemEvalScores {
  id: string;
  type: string;
  correct: string[];
  /** the top 10 distinct sessions, best first */
  top10: string[];
  /** the max_results of the query the top 10 came from */
  maxResults: number;
}

export interface LongMemEvalConfigResult {
  config: string;
  label: string;
  body: Partial<QueryBody>;
  questions: number;
  overall: LongMemEvalScores;
  byType: Record<string, LongMemEvalScores>;
  /** mean number of distinct sessions in the top 10 (fewer when the engine matches fewer) */
  sessionsIn10: number;
  /** questions asked again with a larger max_results because 10 chunks held fewer than 10 sessions */
  widened: number;
  latencyMs: ReturnType<typeof latencySummary>;
  perQuestion: LongMemEvalQuestionResult[];
}

export interface LongMemEvalResult {
  split: 'dev';
  file: LongMemEval['file'];
  questions: number;
  questionsByType: Record<string, number>;
  /** sessions indexed over all the questions' databases, and the chunks the service made of them */
  sessions: number;
  chunks: number;
  /** ms from the first database's creation until every question's sessions are completed */
  ingestMs: number;
  ingestConcurrency: number;
  databases: { question: string; database: string; ingest: IngestTiming }[];
  results: LongMemEvalConfigResult[];
}

/** The question types in the order the benchmark's paper lists them. */
export const LONGMEMEVAL_TYPES = ['single-session-user', 'single-session-assistant', 'single-session-preference', 'multi-session', 'knowledge-update', 'temporal-reasoning'];

export interface QualityRunOptions {
  embedder: string;
  configs: QualityConfig[];
  scifact?: Scifact;
  locomo?: LocomoConversation[];
  longmemeval?: LongMemEval;
  /** LongMemEval databases ingested at once (default 2). */
  ingestConcurrency?: number;
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
  longmemeval?: LongMemEvalResult;
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
  if (opts.longmemeval) run.longmemeval = await runLongMemEval(client, opts.longmemeval, opts);
  const db = run.scifact?.database ?? run.locomo?.conversations[0]?.database ?? run.longmemeval?.databases[0]?.database;
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

/** The top `want` distinct sessions of a query; chunk-level max_results doubles (to the API's cap) until they hold `want`. */
async function topSessions(client: CrsClient, body: QueryBody, want: number, latencies: number[]): Promise<{ ids: string[]; maxResults: number }> {
  for (let max = want; ; max = Math.min(100, max * 2)) {
    const t = performance.now();
    const chunks = await client.query({ ...body, max_results: max });
    latencies.push(performance.now() - t);
    const ids = distinctIds(chunks.map((c) => c.id));
    // Fewer chunks than asked: the engine matched no more, so a larger max_results brings nothing new.
    if (ids.length >= want || chunks.length < max || max >= 100) return { ids: ids.slice(0, want), maxResults: max };
  }
}

function longMemEvalScores(top: string[], correct: Set<string>): LongMemEvalScores {
  return {
    recallAny5: recallAnyAtK(top, correct, 5),
    recallAll5: recallAllAtK(top, correct, 5),
    recallAny10: recallAnyAtK(top, correct, 10),
    recallAll10: recallAllAtK(top, correct, 10),
    ndcg10: ndcgAtKFirstTwoFull(top, correct, 10),
    ndcg10Trec: ndcgAtK(top, new Map([...correct].map((id) => [id, 1])), 10),
  };
}

function meanScores(rows: LongMemEvalScores[]): LongMemEvalScores {
  const m = (f: (r: LongMemEvalScores) => number) => round(mean(rows.map(f)));
  return { recallAny5: m((r) => r.recallAny5), recallAll5: m((r) => r.recallAll5), recallAny10: m((r) => r.recallAny10), recallAll10: m((r) => r.recallAll10), ndcg10: m((r) => r.ndcg10), ndcg10Trec: m((r) => r.ndcg10Trec) };
}

/**
 * LongMemEval-S session retrieval: one database per question (its haystack alone, so keyword statistics never mix
 * haystacks), each session a memory (id = session id, text = its user turns, the session date as additional_metadata),
 * then every configuration asks each question for its top 10 sessions (`type: memory`). The alpha sweep is not run
 * here: the dev file is for measuring, and the sweep exists to choose a default.
 */
async function runLongMemEval(client: CrsClient, data: LongMemEval, opts: QualityRunOptions): Promise<LongMemEvalResult> {
  const concurrency = opts.ingestConcurrency ?? 2;
  const started = Date.now();
  const quiet = createProgress({ quiet: true });
  const bar = opts.progress.bar('LongMemEval: questions ingested', data.questions.length);
  const databases = await mapPool(data.questions, concurrency, async (q) => {
    const database = `lme-${q.id}`.replace(/[^A-Za-z0-9_-]/g, '-');
    await client.createDatabase(database);
    const ingest = await ingestAndWait(
      client,
      database,
      q.sessions.length,
      (s, e) => client.ingestMemories(database, q.sessions.slice(s, e).map((x) => ({ id: x.id, text: x.text, ...(x.date ? { additional_metadata: { session_date: x.date } } : {}) }))),
      q.sessions.map((x) => x.id),
      quiet,
      `LongMemEval ${q.id}`,
    );
    bar.increment();
    return { question: q.id, database, ingest };
  });
  bar.stop();
  const ingestMs = Date.now() - started;
  const questionsByType: Record<string, number> = {};
  for (const q of data.questions) questionsByType[q.type] = (questionsByType[q.type] ?? 0) + 1;
  const types = Object.keys(questionsByType).sort((a, b) => longMemEvalTypeOrder(a) - longMemEvalTypeOrder(b) || a.localeCompare(b));
  const configs = opts.configs.filter((c) => c.sweep === undefined);
  const results: LongMemEvalConfigResult[] = [];
  const qbar = opts.progress.bar('LongMemEval: queries', configs.length * data.questions.length);
  for (const config of configs) {
    const latencies: number[] = [];
    const perQuestion = await mapPool(data.questions, opts.concurrency ?? 4, async (q, i): Promise<LongMemEvalQuestionResult> => {
      const { ids, maxResults } = await topSessions(client, { database: databases[i].database, query: q.question, type: 'memory', ...config.body }, 10, latencies);
      qbar.increment();
      return { id: q.id, type: q.type, correct: q.correct, top10: ids, maxResults, ...longMemEvalScores(ids, new Set(q.correct)) };
    });
    const byType: Record<string, LongMemEvalScores> = {};
    for (const t of types) byType[t] = meanScores(perQuestion.filter((r) => r.type === t));
    results.push({
      config: config.name,
      label: config.label,
      body: config.body,
      questions: perQuestion.length,
      overall: meanScores(perQuestion),
      byType,
      sessionsIn10: round(mean(perQuestion.map((r) => r.top10.length)), 2),
      widened: perQuestion.filter((r) => r.maxResults > 10).length,
      latencyMs: latencySummary(latencies),
      perQuestion,
    });
    const o = results.at(-1)!.overall;
    opts.progress.log(`LongMemEval ${opts.embedder} ${config.name}: any@5 ${o.recallAny5}, all@5 ${o.recallAll5}, any@10 ${o.recallAny10}, all@10 ${o.recallAll10}, nDCG@10 ${o.ndcg10}`);
  }
  qbar.stop();
  return {
    split: 'dev',
    file: data.file,
    questions: data.questions.length,
    questionsByType,
    sessions: databases.reduce((a, d) => a + d.ingest.items, 0),
    chunks: databases.reduce((a, d) => a + d.ingest.chunks, 0),
    ingestMs,
    ingestConcurrency: concurrency,
    databases,
    results,
  };
}

/** Sort key of a question type: the paper's order, unknown types last. */
export const longMemEvalTypeOrder = (type: string) => (LONGMEMEVAL_TYPES.includes(type) ? LONGMEMEVAL_TYPES.indexOf(type) : LONGMEMEVAL_TYPES.length);
