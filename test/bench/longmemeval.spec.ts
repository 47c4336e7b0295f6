import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ndcgAtKFirstTwoFull, recallAllAtK, recallAnyAtK } from '@crs/bench/lib/stats';
import { LONGMEMEVAL_FILE, loadLongMemEval } from '@crs/bench/quality/datasets';
import { spliceSection } from '@crs/bench/quality/report';

const user = (content: string, has_answer?: boolean) => ({ role: 'user', content, ...(has_answer === undefined ? {} : { has_answer }) });
const assistant = (content: string, has_answer?: boolean) => ({ role: 'assistant', content, ...(has_answer === undefined ? {} : { has_answer }) });

/** A question in the file's format: `sessions` as [id, date, turns]. */
function question(id: string, type: string, answers: string[], sessions: [string, string, object[]][]) {
  return {
    question_id: id,
    question_type: type,
    question: `question ${id}`,
    question_date: '2023/06/01 (Thu) 10:00',
    answer: 'x',
    answer_session_ids: answers,
    haystack_session_ids: sessions.map((s) => s[0]),
    haystack_dates: sessions.map((s) => s[1]),
    haystack_sessions: sessions.map((s) => s[2]),
  };
}

describe('LongMemEval-S session retrieval protocol', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'crs-lme-'));
    mkdirSync(join(dir, 'longmemeval'));
    const data = [
      question('q1', 'multi-session', ['answer_a', 'answer_b', 'answer_c'], [
        ['answer_a', 'd1', [user('I adopted a cat', true), assistant('Nice')]],
        ['filler_1', 'd2', [user('weather today'), assistant('sunny')]],
        ['empty_1', 'd3', [assistant('only the assistant speaks')]],
        ['answer_b', 'd4', [user('her name is'), user('Luna', true)]],
        ['filler_1', 'd5', [user('weather today'), assistant('sunny')]],
        ['answer_c', 'd5', [user('unrelated'), assistant('the answer is here', true)]],
      ]),
      question('q2_abs', 'multi-session', ['answer_x'], [['answer_x', 'd1', [user('something', true)]]]),
      question('q3', 'single-session-assistant', ['answer_y'], [['answer_y', 'd1', [user('tell me'), assistant('the answer', true)]]]),
    ];
    writeFileSync(join(dir, LONGMEMEVAL_FILE), execFileSync('xz', ['-c'], { input: JSON.stringify(data) }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('builds one unit per session from the user turns, keeps ids out of the text and scores only answerable questions', () => {
    const { questions, file } = loadLongMemEval(dir);
    expect(questions.map((q) => q.id)).toEqual(['q1']);
    const [q] = questions;
    // no user text: left out; a repeated id: indexed once (its first occurrence)
    expect(q.sessions.map((s) => s.id)).toEqual(['answer_a', 'filler_1', 'answer_b', 'answer_c']);
    expect(q.sessions.map((s) => s.text)).toEqual(['I adopted a cat', 'weather today', 'her name is Luna', 'unrelated']);
    expect(q.sessions.map((s) => s.date)).toEqual(['d1', 'd2', 'd4', 'd5']);
    for (const s of q.sessions) expect(s.text).not.toContain(s.id);
    // answer_c's evidence is an assistant turn: not a correct session
    expect(q.correct.sort()).toEqual(['answer_a', 'answer_b']);
    expect(file).toMatchObject({
      questions: 3,
      skippedAbstention: 1,
      skippedNoCorrectSession: { 'single-session-assistant': 1 },
      sessionsListed: 6,
      sessionsWithoutUserText: 1,
      repeatedSessionIds: 1,
      answerSessionsWithoutUserEvidence: 1,
      consecutiveSameDate: 0,
    });
  });

  it('smoke limit: the correct sessions and the first fillers', () => {
    const { questions } = loadLongMemEval(dir, { questions: 1, fillers: 0 });
    expect(questions[0].sessions.map((s) => s.id)).toEqual(['answer_a', 'answer_b']);
  });

  it('recall_any, recall_all and the benchmark\'s nDCG (ranks 1 and 2 undiscounted)', () => {
    const correct = new Set(['a', 'b']);
    expect(recallAnyAtK(['x', 'a'], correct, 5)).toBe(1);
    expect(recallAnyAtK(['x', 'a'], correct, 1)).toBe(0);
    expect(recallAllAtK(['x', 'a', 'b'], correct, 3)).toBe(1);
    expect(recallAllAtK(['x', 'a', 'b'], correct, 2)).toBe(0);
    // eval_utils.py: dcg = rel[0] + sum(rel[i] / log2(i + 1)) for i >= 1 (0-based)
    expect(ndcgAtKFirstTwoFull(['a', 'b'], correct, 10)).toBeCloseTo(1);
    expect(ndcgAtKFirstTwoFull(['x', 'a'], correct, 10)).toBeCloseTo(1 / 2);
    expect(ndcgAtKFirstTwoFull(['x', 'y', 'a'], correct, 10)).toBeCloseTo(1 / Math.log2(3) / 2);
    expect(ndcgAtKFirstTwoFull(['x'], correct, 10)).toBe(0);
    expect(ndcgAtKFirstTwoFull(['x', 'a'], new Set(['a']), 1)).toBe(0);
  });

  it('puts a section into a report in place of the one with its heading, or at the end', () => {
    const report = '# R\n\n## A\n\na\n\n## B old\n\nold\n\n## C\n\nc\n';
    expect(spliceSection(report, '## B new\n\nnew\n', '## B')).toBe('# R\n\n## A\n\na\n\n## B new\n\nnew\n\n## C\n\nc\n');
    expect(spliceSection('# R\n\n## A\n\na\n', '## B\n\nb', '## B')).toBe('# R\n\n## A\n\na\n\n## B\n\nb\n');
    expect(spliceSection('# R\n\n## B\n\nold\n', '## B\n\nnew\n', '## B')).toBe('# R\n\n## B\n\nnew\n');
  });
});
