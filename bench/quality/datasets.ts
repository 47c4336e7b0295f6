import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the benchmark data lives (never the holdout). */
export const DEFAULT_DATA_DIR = '/work/shared/bench-data';

export interface ScifactDoc {
  id: string;
  title: string;
  text: string;
}

export interface ScifactQuery {
  id: string;
  text: string;
  /** judged relevant doc id → relevance */
  relevant: Map<string, number>;
}

export interface Scifact {
  docs: ScifactDoc[];
  queries: ScifactQuery[];
}

const jsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

/**
 * BEIR SciFact: every corpus document, and the queries of a split (those with judgements in qrels/<split>.tsv):
 * `test` is what results report, `train` is what tuning looks at.
 * `limit` (smoke runs): the first `queries` queries and their relevant documents plus filler up to `docs`.
 */
export function loadScifact(dataDir = DEFAULT_DATA_DIR, limit?: { docs: number; queries: number }, split: 'test' | 'train' = 'test'): Scifact {
  const dir = join(dataDir, 'scifact');
  const docs: ScifactDoc[] = jsonl(join(dir, 'corpus.jsonl')).map((d) => ({ id: String(d._id), title: String(d.title ?? ''), text: String(d.text ?? '') }));
  const qrels = new Map<string, Map<string, number>>();
  const lines = readFileSync(join(dir, `qrels/${split}.tsv`), 'utf8').split('\n').slice(1);
  for (const line of lines) {
    if (!line.trim()) continue;
    const [qid, docId, score] = line.split('\t');
    if (!qrels.has(qid)) qrels.set(qid, new Map());
    qrels.get(qid)!.set(docId, Number(score));
  }
  const texts = new Map<string, string>(jsonl(join(dir, 'queries.jsonl')).map((q) => [String(q._id), String(q.text)]));
  let queries: ScifactQuery[] = [...qrels.entries()].map(([id, relevant]) => {
    const text = texts.get(id);
    if (text === undefined) throw new Error(`SciFact qrels name query ${id} that queries.jsonl does not have`);
    return { id, text, relevant };
  });
  if (!limit) return { docs, queries };
  queries = queries.slice(0, limit.queries);
  const needed = new Set(queries.flatMap((q) => [...q.relevant.keys()]));
  const chosen = docs.filter((d) => needed.has(d.id));
  for (const d of docs) {
    if (chosen.length >= limit.docs) break;
    if (!needed.has(d.id)) chosen.push(d);
  }
  return { docs: chosen, queries };
}

export interface LocomoTurn {
  id: string;
  text: string;
  session: number;
  dateTime: string | null;
  speaker: string;
}

export interface LocomoQuestion {
  question: string;
  category: number;
  evidence: string[];
}

export interface LocomoConversation {
  id: string;
  turns: LocomoTurn[];
  questions: LocomoQuestion[];
}

export const LOCOMO_CATEGORIES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' };

/** `"{speaker} said, \"{text}\""`, plus `" and shared {blip_caption}."` when the turn has an image (data README). */
export function locomoTurnText(turn: { speaker: string; text: string; blip_caption?: string }): string {
  const base = `${turn.speaker} said, "${turn.text}"`;
  return turn.blip_caption ? `${base} and shared ${turn.blip_caption}.` : base;
}

/**
 * LoCoMo dev conversations: dialog turns from the `session_N` keys (not the date keys), questions with evidence as written.
 * `limit` (smoke runs): the first `conversations`, each cut to its first `turns` turns and the questions whose evidence lies in them.
 */
export function loadLocomo(dataDir = DEFAULT_DATA_DIR, limit?: { conversations: number; turns: number; questions: number }): LocomoConversation[] {
  const raw = JSON.parse(readFileSync(join(dataDir, 'locomo/locomo-dev.json'), 'utf8')) as any[];
  const out: LocomoConversation[] = raw.map((sample) => {
    const conv = sample.conversation as Record<string, any>;
    const sessions = Object.keys(conv)
      .map((k) => /^session_(\d+)$/.exec(k))
      .filter((m): m is RegExpExecArray => m !== null && Array.isArray(conv[m[0]]))
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const turns: LocomoTurn[] = [];
    for (const n of sessions) {
      for (const t of conv[`session_${n}`]) {
        turns.push({ id: String(t.dia_id), text: locomoTurnText(t), session: n, dateTime: conv[`session_${n}_date_time`] ?? null, speaker: String(t.speaker) });
      }
    }
    const questions: LocomoQuestion[] = (sample.qa as any[]).map((q) => ({ question: String(q.question), category: Number(q.category), evidence: (q.evidence ?? []).map(String) }));
    return { id: String(sample.sample_id), turns, questions };
  });
  if (!limit) return out;
  return out.slice(0, limit.conversations).map((c) => {
    const turns = c.turns.slice(0, limit.turns);
    const ids = new Set(turns.map((t) => t.id));
    const questions = c.questions.filter((q) => q.evidence.length > 0 && q.evidence.every((e) => ids.has(e))).slice(0, limit.questions);
    return { ...c, turns, questions };
  });
}
