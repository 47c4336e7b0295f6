import { loadavg } from 'node:os';
import { dot, type Embedder } from '@crs/embeddings';
import { chunkText } from '@crs/ingestion';
import { environmentMarkdown, type RunEnvironment } from '../lib/env';
import { mean, ndcgAtK, recallAtK, round } from '../lib/stats';
import type { LocomoConversation, Scifact } from '../quality/datasets';

/** One embedder on one dataset: throughput, and vector-only quality unless only throughput was asked for. */
export interface DatasetResult {
  dataset: 'scifact' | 'locomo';
  /** what one text is: a service chunk of a SciFact abstract, or one LoCoMo turn */
  unit: string;
  texts: number;
  meanChars: number;
  embedSeconds: number;
  textsPerSecond: number;
  /** load average (1 min) before and after the embedding: the machine is shared */
  load: [number, number];
  /** vector-only quality with exact cosine: SciFact nDCG@10 and R@100, LoCoMo R@k in % */
  quality?: Record<string, number>;
  queriesPerSecond?: number;
}

export interface EmbedderRun {
  provider: string;
  modelId: string;
  dimensions: number;
  /** first embed() call, model load included */
  loadMs: number;
  results: DatasetResult[];
}

export interface EmbeddersReport {
  environment: RunEnvironment;
  batch: number;
  /** documents / turns per conversation embedded when only throughput was measured */
  limit: number | null;
  runs: EmbedderRun[];
}

export interface MeasureOptions {
  /** texts per embed() call (the pipeline embeds a claimed batch at once) */
  batch: number;
  /** false: throughput only (for a slice of the data, where quality would mean nothing) */
  quality: boolean;
  log?: (message: string) => void;
}

const LOCOMO_KS = [5, 10, 25, 50];

/** Loads the model (first call) and returns how long that took. */
export async function loadEmbedder(embedder: Embedder): Promise<number> {
  const t0 = performance.now();
  await embedder.embed(['load the model']);
  return Math.round(performance.now() - t0);
}

/**
 * SciFact: every document chunked with the service's chunker (title as context line), embedded in batches; then the
 * test queries, ranked by exact cosine over all chunks, a document at its best chunk.
 */
export async function measureScifact(embedder: Embedder, data: Scifact, opts: MeasureOptions): Promise<DatasetResult> {
  const chunks = data.docs.flatMap((d) => chunkText(d.text, { title: d.title }).map((c) => ({ docId: d.id, text: c.text })));
  const texts = chunks.map((c) => c.text);
  const { vectors, seconds, load } = await timedEmbed(embedder, texts, opts, `scifact ${embedder.modelId}`);
  const result = throughput('scifact', 'chunk of title + abstract (service chunker)', texts, seconds, load);
  opts.log?.(`scifact ${embedder.modelId}: ${result.texts} chunks in ${result.embedSeconds} s, ${result.textsPerSecond} chunks/s`);
  if (!opts.quality) return result;
  const t0 = performance.now();
  const queryVectors = await embedder.embed(data.queries.map((q) => q.text));
  result.queriesPerSecond = round(data.queries.length / ((performance.now() - t0) / 1000), 1);
  const ndcg: number[] = [];
  const recall: number[] = [];
  data.queries.forEach((q, i) => {
    const ranked: string[] = [];
    for (const c of rankByCosine(queryVectors[i], vectors)) {
      if (!ranked.includes(chunks[c].docId)) ranked.push(chunks[c].docId);
      if (ranked.length === 100) break;
    }
    ndcg.push(ndcgAtK(ranked.slice(0, 10), q.relevant, 10));
    recall.push(recallAtK(ranked, new Set([...q.relevant].filter(([, g]) => g > 0).map(([id]) => id)), 100));
  });
  result.quality = { 'nDCG@10': round(mean(ndcg)), 'R@100': round(mean(recall)) };
  opts.log?.(`scifact ${embedder.modelId}: vector-only nDCG@10 ${result.quality['nDCG@10']}, R@100 ${result.quality['R@100']}`);
  return result;
}

/** A dataset's embedding throughput (quality is added by the caller when asked for). */
function throughput(dataset: DatasetResult['dataset'], unit: string, texts: string[], seconds: number, load: DatasetResult['load']): DatasetResult {
  return {
    dataset,
    unit,
    texts: texts.length,
    meanChars: Math.round(mean(texts.map((t) => t.length))),
    embedSeconds: round(seconds, 1),
    textsPerSecond: round(texts.length / seconds, 1),
    load,
  };
}

/** LoCoMo dev: every turn embedded; each conversation's questions ranked over that conversation's turns only. */
export async function measureLocomo(embedder: Embedder, conversations: LocomoConversation[], opts: MeasureOptions): Promise<DatasetResult> {
  const texts = conversations.flatMap((c) => c.turns.map((t) => t.text));
  const { vectors, seconds, load } = await timedEmbed(embedder, texts, opts, `locomo ${embedder.modelId}`);
  const result = throughput('locomo', 'one dialog turn', texts, seconds, load);
  opts.log?.(`locomo ${embedder.modelId}: ${result.texts} turns in ${result.embedSeconds} s, ${result.textsPerSecond} turns/s`);
  if (!opts.quality) return result;
  const recalls = new Map<number, number[]>(LOCOMO_KS.map((k) => [k, []]));
  let offset = 0;
  let questions = 0;
  const t0 = performance.now();
  for (const conversation of conversations) {
    const own = vectors.slice(offset, offset + conversation.turns.length);
    offset += conversation.turns.length;
    const queryVectors = await embedder.embed(conversation.questions.map((q) => q.question));
    questions += conversation.questions.length;
    conversation.questions.forEach((q, i) => {
      const ranked = rankByCosine(queryVectors[i], own)
        .slice(0, Math.max(...LOCOMO_KS))
        .map((j) => conversation.turns[j].id);
      // A question without evidence scores 1; malformed evidence strings count as written (misses): data README.
      for (const k of LOCOMO_KS) recalls.get(k)!.push(q.evidence.length === 0 ? 1 : recallAtK(ranked, new Set(q.evidence), k));
    });
  }
  result.queriesPerSecond = round(questions / ((performance.now() - t0) / 1000), 1);
  result.quality = Object.fromEntries(LOCOMO_KS.map((k) => [`R@${k}`, round(100 * mean(recalls.get(k)!), 1)]));
  opts.log?.(`locomo ${embedder.modelId}: vector-only ${LOCOMO_KS.map((k) => `R@${k} ${result.quality![`R@${k}`]}`).join(', ')}`);
  return result;
}

export function embeddersMarkdown(report: EmbeddersReport): string {
  const lines = [
    '# Embedders in process: throughput and vector-only quality',
    '',
    environmentMarkdown(report.environment),
    `- method: each offline embedder in this process (no service, no cache), texts in batches of ${report.batch}` +
      (report.limit === null ? '' : `, the first ${report.limit} SciFact documents / LoCoMo turns per conversation (throughput only)`) +
      '; vector-only quality by exact cosine over every vector (SciFact test queries: a document ranks at its best chunk;' +
      ' LoCoMo dev: each conversation on its own). A screen before `bench:quality`, which measures through the service.',
    '',
    '| embedder | model | dims | load ms | dataset | texts | mean chars | texts/s | queries/s | load 1-min before / after | vector-only quality |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const run of report.runs) {
    for (const r of run.results) {
      const quality = r.quality ? Object.entries(r.quality).map(([k, v]) => `${k} ${v}`).join(', ') : '';
      lines.push(
        `| ${run.provider} | \`${run.modelId}\` | ${run.dimensions} | ${run.loadMs} | ${r.dataset} | ${r.texts} | ${r.meanChars} | ${r.textsPerSecond} | ${r.queriesPerSecond ?? ''} | ${r.load.join(' / ')} | ${quality} |`,
      );
    }
  }
  return lines.join('\n') + '\n';
}

async function timedEmbed(embedder: Embedder, texts: string[], opts: MeasureOptions, label: string) {
  const vectors: Float32Array[] = [];
  const load0 = loadavg()[0];
  const t0 = performance.now();
  let lastLog = t0;
  for (let i = 0; i < texts.length; i += opts.batch) {
    vectors.push(...(await embedder.embed(texts.slice(i, i + opts.batch))));
    if (opts.log && performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      opts.log(`${label}: ${vectors.length}/${texts.length} (${((vectors.length / (lastLog - t0)) * 1000).toFixed(1)} texts/s)`);
    }
  }
  const load: [number, number] = [round(load0, 2), round(loadavg()[0], 2)];
  return { vectors, seconds: (performance.now() - t0) / 1000, load };
}

/** Indices of all vectors, most similar to q first (dot product of unit vectors; ties by index). */
function rankByCosine(q: Float32Array, vectors: Float32Array[]): number[] {
  const scores = vectors.map((v) => dot(q, v));
  return scores.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
}
