import type { DataSource } from 'typeorm';
import { evaluateRetrieval, EVALUATION_CUTOFFS, type JudgedQuery, type QueryScore } from '@crs/domain/feedback/feedback-evaluation';
import { feedbackWithQueries, type FeedbackWithQueryRow } from '@crs/projections/feedback/feedback.queries';

/** One exported submission (NDJSON line of `crs feedback export`). */
export interface FeedbackExportLine {
  feedback_id: string;
  request_id: string;
  created_at: string;
  database: string | null;
  collection: string | null;
  feedback: string | null;
  rating: string | null;
  source: string;
  ground_truth: { answer: string | null; source_ids: string[] } | null;
  metadata: Record<string, string>;
  linked: boolean;
  /** the linked query as recorded: its text and ranked results (item ids) */
  query: { text: string; type: string; mode: string; results: { id: string; score: number }[] } | null;
}

export interface FeedbackReport {
  organization: string;
  database: string | null;
  submissions: number;
  linked: number;
  unlinked: number;
  ratings: { positive: number; negative: number; neutral: number; none: number };
  sources: { user: number; agent: number };
  with_ground_truth: number;
  evaluation: {
    queries: number;
    recall_at: Record<string, number>;
    mrr: number;
    per_query: (Omit<QueryScore, 'recallAt'> & { recall_at: Record<string, number>; query: string })[];
  };
}

/** Reads of the feedback read model for the CLI: export and the retrieval-quality report. */
export class FeedbackRepository {
  constructor(private readonly ds: DataSource) {}

  async rows(orgId: string, opts: { databaseId?: string; since?: Date } = {}): Promise<FeedbackWithQueryRow[]> {
    return feedbackWithQueries(this.ds, orgId, opts);
  }

  async export(orgId: string, opts: { databaseId?: string; since?: Date } = {}): Promise<FeedbackExportLine[]> {
    return (await this.rows(orgId, opts)).map((r) => ({
      feedback_id: r.feedback_id,
      request_id: r.request_id,
      created_at: new Date(r.created_at).toISOString(),
      database: r.database_name,
      collection: r.collection,
      feedback: r.feedback,
      rating: r.rating,
      source: r.source,
      ground_truth: r.ground_truth_source_ids ? { answer: r.ground_truth_answer, source_ids: r.ground_truth_source_ids } : null,
      metadata: r.metadata,
      linked: r.linked,
      query: r.query !== null ? { text: r.query, type: r.query_type!, mode: r.query_mode!, results: (r.results ?? []).map((x) => ({ id: x.itemId, score: x.score })) } : null,
    }));
  }

  /**
   * Counts, and an evaluation of retrieval from users' own ground truth: for each linked query with
   * `ground_truth.source_ids` (united over all its feedback), recall@k and reciprocal rank of its recorded results.
   */
  async report(orgId: string, opts: { databaseId?: string; databaseName?: string } = {}): Promise<FeedbackReport> {
    const rows = await this.rows(orgId, { databaseId: opts.databaseId });
    const judged = new Map<string, JudgedQuery & { query: string }>();
    const ratings = { positive: 0, negative: 0, neutral: 0, none: 0 };
    const sources = { user: 0, agent: 0 };
    let linked = 0;
    let withGroundTruth = 0;
    for (const r of rows) {
      if (r.linked) linked++;
      ratings[(r.rating ?? 'none') as keyof typeof ratings]++;
      sources[r.source as keyof typeof sources]++;
      if (r.ground_truth_source_ids || r.ground_truth_answer) withGroundTruth++;
      if (!r.linked || !r.results || !r.ground_truth_source_ids?.length) continue;
      const q = judged.get(r.request_id) ?? { requestId: r.request_id, retrieved: r.results.map((x) => x.itemId), relevant: [], query: r.query ?? '' };
      q.relevant = [...new Set([...q.relevant, ...r.ground_truth_source_ids])];
      judged.set(r.request_id, q);
    }
    const summary = evaluateRetrieval([...judged.values()]);
    const text = new Map([...judged.values()].map((q) => [q.requestId, q.query]));
    const keyed = (m: Record<number, number>) => Object.fromEntries(EVALUATION_CUTOFFS.map((k) => [String(k), m[k]]));
    return {
      organization: orgId,
      database: opts.databaseName ?? null,
      submissions: rows.length,
      linked,
      unlinked: rows.length - linked,
      ratings,
      sources,
      with_ground_truth: withGroundTruth,
      evaluation: {
        queries: summary.queries,
        recall_at: keyed(summary.recallAt),
        mrr: summary.mrr,
        per_query: summary.perQuery.map(({ recallAt, ...s }) => ({ ...s, recall_at: keyed(recallAt), query: text.get(s.requestId) ?? '' })),
      },
    };
  }
}
