import { configFromEnv } from '@crs/config';
import { CONTEXT_DEFAULTS } from '@crs/domain/retrieval/conversation-context';
import { POOL_DEFAULTS } from '@crs/domain/retrieval/pool-size';
import { THINKING_DEFAULTS } from '@crs/domain/retrieval/thinking-weights';
import { AUTO_ALPHA } from '@crs/domain/retrieval/alpha';
import { environmentMarkdown, type RunEnvironment } from '../lib/env';
import { LONGMEMEVAL_FILE } from './datasets';
import { longMemEvalTypeOrder, type LongMemEvalScores, type QualityRun, type RankingDefaults } from './run-quality';

/** Published reference points, exactly as the data README gives them. */
export const REFERENCES = {
  scifact: [
    { system: 'BM25 flat (Pyserini/Anserini, BEIR v1.0.0)', ndcg10: 0.6789, recall100: 0.9253 },
    { system: 'BM25 multifield', ndcg10: 0.6647, recall100: null },
    { system: 'SPLADE++', ndcg10: 0.7041, recall100: null },
    { system: 'Contriever-msmarco', ndcg10: 0.6768, recall100: null },
    { system: 'BGE-base-en-v1.5', ndcg10: 0.7408, recall100: null },
  ],
  locomo: [
    { system: 'DRAGON dense retriever (LoCoMo paper, Table 3, all ten conversations)', recall: { 5: 56.7, 10: 66.2, 25: 76.7, 50: 82.7 } },
    { system: 'BM25 over the same units (roughly, per the data README)', recall: { 5: 52, 10: 60, 25: 70, 50: 76 } },
  ],
  longmemeval: [
    { system: 'BM25 over the same units, the full LongMemEval-S (500 questions; about, per the data README)', recallAny5: 0.95, recallAll5: 0.87, recallAny10: null, recallAll10: null, ndcg10: 0.9 },
  ],
};

export const TARGETS = { scifactNdcg10: 0.7, locomoRecall10: 70 };

/** The ranking defaults a service started from this environment runs with (the thinking weights take THINKING_* env). */
export function rankingDefaults(env: NodeJS.ProcessEnv = process.env): RankingDefaults {
  return { alpha: AUTO_ALPHA, thinking: configFromEnv(env, 'postgres://unused').retrieval.thinking };
}

const thinkingText = (w: Record<string, number>) =>
  `graph weight ${w.graphWeight}, k ${w.rrfK}; entity weights: query ${w.queryEntity}, neighbour ${w.neighbour} (${w.neighbours} per query), shared by the top ${w.topHits} hits ${w.hitEntity}; expansion ${w.expansion}, leaving out entities in more than ${w.maxEntityChunks} chunks`;

/**
 * Which data each ranking default was chosen on (docs/retrieval.md has the measurements): a figure measured on the
 * data a setting was chosen on is in-sample for it.
 */
export function defaultsProvenance(): string[][] {
  const chunkTokens = process.env.CHUNK_TOKENS ?? '512';
  return [
    ['alpha "auto" and omitted (AUTO_ALPHA)', String(AUTO_ALPHA), 'SciFact train (809 queries): bench/results/quality-train-sweep.md'],
    ['thinking weights (THINKING_DEFAULTS)', thinkingText(THINKING_DEFAULTS), 'SciFact train (809 queries), among settings that keep a graph-only hit: bench/results/quality-train-sweep.md'],
    ['chunk size (CHUNK_TOKENS)', chunkTokens, 'SciFact train (docs/retrieval.md, "Chunk size")'],
    ['candidate pool (RETRIEVAL_POOL_MIN, _FACTOR)', `max(${POOL_DEFAULTS.min}, ${POOL_DEFAULTS.factor} × max_results)`, 'LoCoMo dev and SciFact train, with latency (docs/retrieval.md, "Candidate pool")'],
    ['conversation context (RETRIEVAL_CONTEXT_AFTER, _BEFORE)', `next ${CONTEXT_DEFAULTS.after.join(', ')}; previous ${CONTEXT_DEFAULTS.before.join(', ')}`, 'LoCoMo dev (docs/retrieval.md, "Conversation context")'],
  ];
}

const LOCOMO_IN_SAMPLE = 'in-sample: dev is LoCoMo\'s only split, and the conversation context and candidate pool were chosen on it';

export interface QualityReport {
  kind: 'quality';
  environment: RunEnvironment;
  configuration: Record<string, unknown>;
  runs: QualityRun[];
  references: typeof REFERENCES;
  targets: { scifact_ndcg10: { target: number; measured: number | null; met: boolean | null }; locomo_r10: { target: number; measured: number | null; met: boolean | null } };
  finishedAt: string;
}

export function qualityTargets(runs: QualityRun[]): QualityReport['targets'] {
  const glove = runs.find((r) => r.embedder === 'glove');
  const sf = glove?.scifact?.results.find((r) => r.config === 'hybrid')?.ndcg10 ?? null;
  const lc = glove?.locomo?.results.find((r) => r.config === 'hybrid')?.recall['10']?.overall ?? null;
  return {
    scifact_ndcg10: { target: TARGETS.scifactNdcg10, measured: sf, met: sf === null ? null : sf >= TARGETS.scifactNdcg10 },
    locomo_r10: { target: TARGETS.locomoRecall10, measured: lc, met: lc === null ? null : lc >= TARGETS.locomoRecall10 },
  };
}

const f3 = (x: number | null | undefined) => (x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(3));
const f1 = (x: number | null | undefined) => (x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(1));
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '—');

function table(header: string[], rows: (string | number)[][]): string {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

export function qualityMarkdown(report: QualityReport): string {
  const out: string[] = [];
  out.push('# Retrieval quality (through the HTTP API)', '');
  out.push(environmentMarkdown(report.environment));
  out.push(`- configuration: ${Object.entries(report.configuration).map(([k, v]) => `${k} = \`${JSON.stringify(v)}\``).join(', ')}`);
  for (const r of report.runs) {
    const e = r.environment;
    const where = e ? `, commit \`${e.commit.slice(0, 12)}\`${e.dirty ? ` + ${e.dirtyFiles.length} uncommitted path(s) (${e.dirtyFiles.slice(0, 6).map((l) => l.trim()).join(', ')})` : ' (clean tree)'}, started ${e.startedAt}, load ${e.machine.loadAverageAtStart.join('/')}` : '';
    const defaults = r.defaults ? `; defaults: alpha ${r.defaults.alpha}, thinking ${thinkingText(r.defaults.thinking)}` : '';
    out.push(`- embedder \`${r.embedder}\`: model \`${r.modelId}\` (${r.dimensions}-d), run took ${(r.wallMs / 60000).toFixed(1)} min, ${r.retries ?? 0} request(s) retried after a 5xx/network error${where}${defaults}`);
  }
  out.push(
    '- method: the built service runs as a separate process on its embedded default (Postgres + LanceDB under a fresh DATA_DIR), one service run per embedder;',
    '  data is ingested through `POST /context/ingest`, awaited through `GET /context/status` (every item `completed`), and queried through `POST /query`.',
    '',
  );
  const t = report.targets;
  out.push('## Targets (offline default: glove, hybrid, default alpha)', '');
  out.push(
    table(
      ['target', 'measured', 'verdict'],
      [
        [`SciFact nDCG@10 ≥ ${t.scifact_ndcg10.target}`, f3(t.scifact_ndcg10.measured), verdict(t.scifact_ndcg10.met, t.scifact_ndcg10.measured, t.scifact_ndcg10.target, 3)],
        [`LoCoMo dev R@10 ≥ ${t.locomo_r10.target} (${LOCOMO_IN_SAMPLE})`, f1(t.locomo_r10.measured), verdict(t.locomo_r10.met, t.locomo_r10.measured, t.locomo_r10.target, 1)],
      ],
    ),
    '',
  );
  out.push('## Where the defaults were chosen', '');
  out.push(table(['setting', 'default', 'chosen on'], defaultsProvenance()), '');
  out.push(
    'No default was chosen on the SciFact test queries: its figures are out-of-sample. The LoCoMo figures are in-sample: dev is LoCoMo\'s only split, ' +
      'and the conversation context and candidate pool were chosen on it.',
    '',
  );

  const withScifact = report.runs.filter((r) => r.scifact);
  if (withScifact.length) {
    const s0 = withScifact[0].scifact!;
    const split = (report.configuration as { scifactSplit?: string }).scifactSplit ?? 'test';
    out.push(`## SciFact (BEIR ${split} split)`, '');
    out.push(
      `${s0.docs} documents ingested as knowledge app items (title + abstract), ${s0.queries} ${split} queries, binary relevance from qrels/${split}.tsv ` +
        (split === 'train' ? '(the split the default alpha, thinking weights and chunk size were chosen on: in-sample). ' : '(no default was chosen on this split). ') +
        'nDCG@10 from a `max_results: 10` query, Recall@100 from a `max_results: 100` query (the cap); the service returns chunks, so a document ' +
        'ranks at its best chunk and repeats are dropped (the columns "docs in 10/100" show how many distinct documents came back).',
      '',
    );
    const rows: (string | number)[][] = [];
    for (const r of withScifact) {
      for (const c of r.scifact!.results.filter((c) => c.sweep === undefined)) {
        rows.push([`${r.embedder}: ${c.label}`, f3(c.ndcg10), f3(c.recall100), c.distinctDocsIn10.toFixed(1), c.distinctDocsIn100.toFixed(1), ms(c.latencyMs.p50)]);
      }
    }
    for (const ref of REFERENCES.scifact) rows.push([`reference: ${ref.system}`, f3(ref.ndcg10), f3(ref.recall100), '', '', '']);
    out.push(table(['configuration', 'nDCG@10', 'Recall@100', 'docs in 10', 'docs in 100', 'client p50 ms'], rows), '');
    out.push(
      table(
        ['embedder', 'documents', 'chunks', 'ingest requests s', 'until all completed s', 'items/s to completed'],
        withScifact.map((r) => {
          const i = r.scifact!.ingest;
          return [r.embedder, i.items, i.chunks, (i.requestsMs / 1000).toFixed(1), (i.completedMs / 1000).toFixed(1), (i.items / (i.completedMs / 1000)).toFixed(1)];
        }),
      ),
      '',
    );
  }

  const withLocomo = report.runs.filter((r) => r.locomo);
  if (withLocomo.length) {
    const l0 = withLocomo[0].locomo!;
    const ks = l0.ks;
    out.push(`## LoCoMo dev (evidence recall, %; ${LOCOMO_IN_SAMPLE})`, '');
    out.push(
      `${l0.conversations.length} conversations (${l0.conversations.map((c) => `${c.id}: ${c.turns} turns`).join(', ')}), each in its own database; ` +
        `every dialog turn is a memory with its \`dia_id\` as id and the README's text format (session number and date time as additional_metadata). ` +
        `${l0.questions} questions (${Object.entries(l0.questionsByCategory).sort(([a], [b]) => a.localeCompare(b)).map(([c, n]) => `${c}: ${n}`).join(', ')}). ` +
        'Each k is its own `max_results: k` query; malformed evidence strings count as written (misses); a question without evidence scores 1.',
      '',
    );
    const rows: (string | number)[][] = [];
    for (const r of withLocomo) for (const c of r.locomo!.results.filter((c) => c.sweep === undefined)) rows.push([`${r.embedder}: ${c.label}`, ...ks.map((k) => f1(c.recall[String(k)].overall)), ms(c.latencyMs.p50)]);
    for (const ref of REFERENCES.locomo) rows.push([`reference: ${ref.system}`, ...ks.map((k) => f1((ref.recall as Record<number, number>)[k])), '']);
    out.push(table(['configuration', ...ks.map((k) => `R@${k}`), 'client p50 ms'], rows), '');
    const cats = Object.keys(l0.questionsByCategory).sort();
    out.push('Per category (R@5 / R@10 / R@25 / R@50):', '');
    const catRows: (string | number)[][] = [];
    for (const r of withLocomo) {
      for (const c of r.locomo!.results.filter((c) => c.sweep === undefined)) {
        catRows.push([`${r.embedder}: ${c.label}`, ...cats.map((cat) => ks.map((k) => f1(c.recall[String(k)].byCategory[cat])).join(' / '))]);
      }
    }
    out.push(table(['configuration', ...cats.map((c) => `${c} (${l0.questionsByCategory[c]})`)], catRows), '');
  }

  const lme = longMemEvalMarkdown(report);
  if (lme) out.push(lme, '');

  const sweepRuns = report.runs.filter((r) => r.scifact?.results.some((c) => c.sweep !== undefined) || r.locomo?.results.some((c) => c.sweep !== undefined));
  if (sweepRuns.length) {
    out.push('## Alpha sweep (hybrid; 0 = keyword only, 1 = vector only)', '');
    const alphas = [...new Set(sweepRuns.flatMap((r) => [...(r.scifact?.results ?? []), ...(r.locomo?.results ?? [])].filter((c) => c.sweep !== undefined).map((c) => c.sweep!)))].sort((a, b) => a - b);
    const rows: (string | number)[][] = [];
    for (const r of sweepRuns) {
      if (r.scifact) rows.push([r.embedder, 'SciFact nDCG@10', ...alphas.map((a) => f3(r.scifact!.results.find((c) => c.sweep === a)?.ndcg10))]);
      if (r.scifact) rows.push([r.embedder, 'SciFact R@100', ...alphas.map((a) => f3(r.scifact!.results.find((c) => c.sweep === a)?.recall100))]);
      if (r.locomo) for (const k of r.locomo.ks) rows.push([r.embedder, `LoCoMo R@${k}`, ...alphas.map((a) => f1(r.locomo!.results.find((c) => c.sweep === a)?.recall[String(k)].overall))]);
    }
    out.push(table(['embedder', 'metric', ...alphas.map((a) => `α ${a}`)], rows), '');
    out.push(`The default alpha ("auto" and omitted) is ${AUTO_ALPHA} (AUTO_ALPHA in libs/domain/src/retrieval/alpha.ts), chosen on SciFact train (bench/results/quality-train-sweep.md); the SciFact rows here are test queries, reported, not chosen on.`, '');
  }
  return out.join('\n');
}

function verdict(met: boolean | null, measured: number | null, target: number, digits: number): string {
  if (met === null || measured === null) return 'not measured';
  const gap = measured - target;
  return met ? `met (+${gap.toFixed(digits)})` : `missed by ${(-gap).toFixed(digits)}`;
}

export const LONGMEMEVAL_HEADING = '## LongMemEval-S dev';

const LONGMEMEVAL_METRICS: [keyof LongMemEvalScores, string][] = [
  ['recallAny5', 'recall_any@5'],
  ['recallAll5', 'recall_all@5'],
  ['recallAny10', 'recall_any@10'],
  ['recallAll10', 'recall_all@10'],
  ['ndcg10', 'nDCG@10'],
];

/**
 * The LongMemEval-S section: self-contained (each run's commit, machine and split are in it), so it can stand in a
 * report whose other sections come from another run (`spliceSection`). Empty when no run has LongMemEval.
 */
export function longMemEvalMarkdown(report: QualityReport): string {
  const runs = report.runs.filter((r) => r.longmemeval);
  if (!runs.length) return '';
  const l0 = runs[0].longmemeval!;
  const f = l0.file;
  const out: string[] = [];
  const count = (o: Record<string, number>) => Object.entries(o).map(([t, n]) => `${t}: ${n}`).join(', ');
  out.push(`${LONGMEMEVAL_HEADING} (session retrieval, the benchmark's retrieval protocol; out-of-sample: no default was chosen on it)`, '');
  for (const r of runs) {
    const e = r.environment ?? report.environment;
    const tree = e.dirty ? `+ ${e.dirtyFiles.length} uncommitted path(s) (${e.dirtyFiles.slice(0, 6).map((l) => l.trim()).join(', ')})` : '(clean tree)';
    const defaults = r.defaults ? `; defaults: alpha ${r.defaults.alpha}, thinking ${thinkingText(r.defaults.thinking)}` : '';
    out.push(
      `- run (\`${r.embedder}\`, model \`${r.modelId}\`): commit \`${e.commit}\` ${tree}, started ${e.startedAt}; machine: ${e.machine.cores} cores (${e.machine.cpu}), ${e.machine.memoryGiB} GiB, node ${e.machine.node}, load at start ${e.machine.loadAverageAtStart.join(' / ')}; ` +
        `the run took ${(r.wallMs / 60000).toFixed(1)} min, of which ingest ${(r.longmemeval!.ingestMs / 60000).toFixed(1)} min; ${r.retries ?? 0} request(s) retried${defaults}`,
    );
  }
  out.push(
    `- split: dev, \`${LONGMEMEVAL_FILE}\` (${f.questions} of LongMemEval-S's 500 questions, stratified by question type: ${count(f.byType)}); measured only, nothing is chosen on it`,
    '',
  );
  const noCorrect = Object.values(f.skippedNoCorrectSession).reduce((a, b) => a + b, 0);
  out.push(
    `Not scored: ${f.skippedAbstention} abstention questions (\`_abs\`) and ${noCorrect} left with no correct session (${count(f.skippedNoCorrectSession) || 'none'}: no answer session holds a user turn with \`has_answer\`). ` +
      `${l0.questions} questions scored (${count(l0.questionsByType)}). Each question has its own database holding its haystack: ${l0.sessions} sessions in all ` +
      `(${(l0.sessions / l0.questions).toFixed(1)} per question; ${f.sessionsWithoutUserText} without user text left out, ${f.repeatedSessionIds} repeated session id(s) indexed once), ${l0.chunks} chunks. ` +
      'Each session is a memory whose id is the session id (never part of the text) and whose text is its user turns joined by a space, with its date as `additional_metadata.session_date`; ' +
      `${f.consecutiveSameDate} pair(s) of consecutive sessions share a date string, which the conversation context takes for one conversation. ` +
      `Correct sessions: the answer sessions holding a user turn with \`has_answer: true\` (${f.answerSessionsWithoutUserEvidence} answer session(s) without one are not counted). ` +
      'Each configuration asks `POST /query` with `type: "memory"` and `max_results: 10`, doubled (up to 100) for a question whose chunks hold fewer than 10 sessions ' +
      '(a long session is several chunks; a session ranks at its best chunk); "widened" counts those questions. recall_any@k is 1 when any correct session is in the top k, ' +
      "recall_all@k when all are; nDCG@10 has binary relevance and the benchmark's own DCG (src/retrieval/eval_utils.py: ranks 1 and 2 undiscounted; the JSON also has trec_eval's form). " +
      'Means over the questions, overall and per `question_type`. The keyword-only row is the BM25 baseline: the engine\'s BM25 full-text search over the same units, through the API.',
    '',
  );
  const label = (embedder: string, c: { config: string; label: string }) => `${embedder}: ${c.label}${c.config === 'keyword' ? ', BM25 over the same units' : ''}`;
  const rows: (string | number)[][] = [];
  for (const r of runs) {
    for (const c of r.longmemeval!.results) {
      rows.push([label(r.embedder, c), ...LONGMEMEVAL_METRICS.map(([m]) => f3(c.overall[m])), c.sessionsIn10.toFixed(1), c.widened, ms(c.latencyMs.p50)]);
    }
  }
  for (const ref of REFERENCES.longmemeval) rows.push([`reference: ${ref.system}`, ...LONGMEMEVAL_METRICS.map(([m]) => f3((ref as Record<string, unknown>)[m] as number | null)), '', '', '']);
  out.push(table(['configuration', ...LONGMEMEVAL_METRICS.map(([, h]) => h), 'sessions in 10', 'widened', 'client p50 ms'], rows), '');
  out.push('Per question type:', '');
  const typeRows: (string | number)[][] = [];
  for (const t of Object.keys(l0.questionsByType).sort((a, b) => longMemEvalTypeOrder(a) - longMemEvalTypeOrder(b) || a.localeCompare(b))) {
    for (const r of runs) {
      for (const c of r.longmemeval!.results) {
        const s = c.byType[t];
        typeRows.push([`${t} (${r.longmemeval!.questionsByType[t]})`, label(r.embedder, c), ...LONGMEMEVAL_METRICS.map(([m]) => f3(s?.[m]))]);
      }
    }
  }
  out.push(table(['question_type (scored)', 'configuration', ...LONGMEMEVAL_METRICS.map(([, h]) => h)], typeRows), '');
  out.push(
    table(
      ['embedder', 'databases', 'sessions', 'chunks', 'databases ingested at once', 'until all completed s', 'sessions/s to completed'],
      runs.map((r) => {
        const l = r.longmemeval!;
        return [r.embedder, l.databases.length, l.sessions, l.chunks, l.ingestConcurrency, (l.ingestMs / 1000).toFixed(1), (l.sessions / (l.ingestMs / 1000)).toFixed(1)];
      }),
    ),
  );
  return out.join('\n');
}


/**
 * Puts a section (starting with its `## ` heading) into a Markdown report: in place of the section with the same
 * heading prefix, else at the end. The rest of the report is kept byte for byte.
 */
export function spliceSection(markdown: string, section: string, headingPrefix: string): string {
  const lines = markdown.replace(/\n+$/, '').split('\n');
  const start = lines.findIndex((l) => l.startsWith(headingPrefix));
  const body = section.replace(/\n+$/, '').split('\n');
  if (start < 0) return `${[...lines, '', ...body].join('\n')}\n`;
  let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  if (end < 0) end = lines.length;
  const after = lines.slice(end);
  return `${[...lines.slice(0, start), ...body, ...(after.length ? ['', ...after] : [])].join('\n')}\n`;
}
