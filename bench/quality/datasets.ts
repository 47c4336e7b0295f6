import { execFileSync } from 'node:child_process';
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

/** One haystack session as the benchmark indexes it: the session id, its user turns joined by a space, its date. */
export interface LongMemEvalSession {
  id: string;
  text: string;
  date: string | null;
}

export interface LongMemEvalQuestion {
  id: string;
  type: string;
  question: string;
  questionDate: string | null;
  /** The haystack as indexed: sessions without user text left out, a repeated id kept once (its first occurrence). */
  sessions: LongMemEvalSession[];
  /** The answer sessions that hold at least one user turn with `has_answer: true`. */
  correct: string[];
}

export interface LongMemEval {
  /** The scored questions, in file order. */
  questions: LongMemEvalQuestion[];
  /** What the file holds and what the protocol left out of it. */
  file: {
    questions: number;
    byType: Record<string, number>;
    skippedAbstention: number;
    skippedNoCorrectSession: Record<string, number>;
    /** haystack sessions of the scored questions, as listed, before the protocol's exclusions */
    sessionsListed: number;
    sessionsWithoutUserText: number;
    repeatedSessionIds: number;
    /** answer sessions named by a scored question that hold no user turn with has_answer (not counted as correct) */
    answerSessionsWithoutUserEvidence: number;
    /** consecutive indexed sessions with the same date string (the service's conversation context links those) */
    consecutiveSameDate: number;
  };
}

export const LONGMEMEVAL_FILE = 'longmemeval/longmemeval-s-dev.json.xz';

/**
 * Reads an `.xz` JSON file through the `xz` binary (Node has no xz decoder built in); nothing is written to disk.
 */
export function readXzJson(file: string): unknown {
  let text: string;
  try {
    text = execFileSync('xz', ['-dc', file], { encoding: 'utf8', maxBuffer: 512 * 2 ** 20, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`reading ${file} needs the xz binary on the PATH (package xz-utils)`);
    throw err;
  }
  return JSON.parse(text);
}

interface RawTurn {
  role: string;
  content: string;
  has_answer?: boolean;
}

interface RawLongMemEvalQuestion {
  question_id: string;
  question_type: string;
  question: string;
  question_date?: string;
  answer_session_ids: string[];
  haystack_session_ids: string[];
  haystack_dates: string[];
  haystack_sessions: RawTurn[][];
}

/** A session's text as the benchmark's session-level retrieval indexes it: the user turns' contents joined by a space. */
export function longMemEvalSessionText(turns: RawTurn[]): string {
  return turns
    .filter((t) => t.role === 'user')
    .map((t) => t.content)
    .join(' ');
}

/**
 * LongMemEval-S dev in the benchmark's session-level retrieval protocol (data README): each question its own
 * haystack; each session one unit (id = session id, never part of the text; text = the user turns joined by a
 * space; sessions with no user text left out; a repeated id indexed once); the correct sessions are the answer
 * sessions holding a user turn with `has_answer: true`; abstention questions (`_abs`) and questions left with no
 * correct session are not scored.
 * `limit` (smoke runs): the first `questions` scored questions, each haystack cut to its correct sessions and the
 * first `fillers` others (in haystack order).
 */
export function loadLongMemEval(dataDir = DEFAULT_DATA_DIR, limit?: { questions: number; fillers: number }): LongMemEval {
  const raw = readXzJson(join(dataDir, LONGMEMEVAL_FILE)) as RawLongMemEvalQuestion[];
  const file: LongMemEval['file'] = {
    questions: raw.length,
    byType: {},
    skippedAbstention: 0,
    skippedNoCorrectSession: {},
    sessionsListed: 0,
    sessionsWithoutUserText: 0,
    repeatedSessionIds: 0,
    answerSessionsWithoutUserEvidence: 0,
    consecutiveSameDate: 0,
  };
  const questions: LongMemEvalQuestion[] = [];
  for (const q of raw) {
    file.byType[q.question_type] = (file.byType[q.question_type] ?? 0) + 1;
    if (q.question_id.endsWith('_abs')) {
      file.skippedAbstention++;
      continue;
    }
    const answers = new Set(q.answer_session_ids.map(String));
    const correct = new Set<string>();
    const seen = new Set<string>();
    const sessions: LongMemEvalSession[] = [];
    let listed = 0;
    let withoutText = 0;
    let repeated = 0;
    q.haystack_sessions.forEach((turns, i) => {
      const id = String(q.haystack_session_ids[i]);
      listed++;
      if (seen.has(id)) return void repeated++;
      seen.add(id);
      const text = longMemEvalSessionText(turns);
      if (!/\S/.test(text)) return void withoutText++;
      sessions.push({ id, text, date: q.haystack_dates[i] ?? null });
      if (answers.has(id) && turns.some((t) => t.role === 'user' && t.has_answer === true)) correct.add(id);
    });
    if (correct.size === 0) {
      file.skippedNoCorrectSession[q.question_type] = (file.skippedNoCorrectSession[q.question_type] ?? 0) + 1;
      continue;
    }
    file.sessionsListed += listed;
    file.sessionsWithoutUserText += withoutText;
    file.repeatedSessionIds += repeated;
    file.answerSessionsWithoutUserEvidence += [...answers].filter((a) => seen.has(a) && !correct.has(a)).length;
    for (let i = 1; i < sessions.length; i++) if (sessions[i].date !== null && sessions[i].date === sessions[i - 1].date) file.consecutiveSameDate++;
    questions.push({ id: q.question_id, type: q.question_type, question: q.question, questionDate: q.question_date ?? null, sessions, correct: [...correct] });
  }
  if (!limit) return { questions, file };
  const cut = questions.slice(0, limit.questions).map((q) => {
    const correct = new Set(q.correct);
    let fillers = 0;
    return { ...q, sessions: q.sessions.filter((s) => correct.has(s.id) || fillers++ < limit.fillers) };
  });
  return { questions: cut, file };
}
