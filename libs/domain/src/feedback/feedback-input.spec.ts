import { normalizeFeedback } from './feedback-input';

const rid = '3f2b8c1e-9a4d-4e2f-8b7a-1c2d3e4f5a6b';
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as { code: string }).code;
  }
  return 'OK';
};

describe('feedback input rules', () => {
  it('normalizes: blank values are not sent, duplicate and blank source ids collapse, rating stays null, source defaults to user', () => {
    const n = normalizeFeedback({ request_id: rid.toUpperCase(), feedback: '   ', ground_truth: { answer: ' ', source_ids: ['a', '', ' ', 'b', 'a'] } });
    expect(n).toEqual({ requestId: rid, feedback: null, rating: null, source: 'user', groundTruth: { answer: null, sourceIds: ['a', 'b'] }, metadata: {} });
  });

  it('keeps a metadata key named __proto__ as sent (as it would arrive from a parsed JSON body)', () => {
    const n = normalizeFeedback({ request_id: rid, feedback: 'x', metadata: JSON.parse('{"__proto__":"v","k":"w"}') });
    expect(JSON.stringify(n.metadata)).toBe('{"__proto__":"v","k":"w"}');
  });

  it('a blank value counts as absent at any length: it is not measured against the limit', () => {
    const n = normalizeFeedback({ request_id: rid, feedback: ' '.repeat(9000), ground_truth: { answer: '\n'.repeat(9000), source_ids: ['doc-1'] } });
    expect(n).toMatchObject({ feedback: null, groundTruth: { answer: null, sourceIds: ['doc-1'] } });
  });

  it('keeps an answer alone, and feedback alone', () => {
    expect(normalizeFeedback({ request_id: rid, ground_truth: { answer: 'Paris' } }).groundTruth).toEqual({ answer: 'Paris', sourceIds: [] });
    expect(normalizeFeedback({ request_id: rid, feedback: 'good', ground_truth: {} }).groundTruth).toBeNull();
  });

  it.each([
    [{}, 'INVALID_INPUT'],
    [{ request_id: 'not-a-uuid', feedback: 'x' }, 'INVALID_INPUT'],
    [{ request_id: 42, feedback: 'x' }, 'INVALID_INPUT'],
    [{ request_id: rid }, 'FEEDBACK_EMPTY'],
    [{ request_id: rid, feedback: ' \n\t' }, 'FEEDBACK_EMPTY'],
    [{ request_id: rid, ground_truth: { answer: '  ', source_ids: [' ', ''] } }, 'FEEDBACK_EMPTY'],
    [{ request_id: rid, ground_truth: {} }, 'FEEDBACK_EMPTY'],
    [{ request_id: rid, feedback: 'x'.repeat(8001) }, 'FEEDBACK_TOO_LONG'],
    [{ request_id: rid, ground_truth: { answer: 'x'.repeat(8001) } }, 'FEEDBACK_TOO_LONG'],
    [{ request_id: rid, ground_truth: { source_ids: Array.from({ length: 101 }, (_, i) => `s${i}`) } }, 'TOO_MANY_SOURCE_IDS'],
    [{ request_id: rid, ground_truth: { source_ids: ['x'.repeat(257)] } }, 'SOURCE_ID_TOO_LONG'],
    [{ request_id: rid, feedback: 'x', rating: 'great' }, 'INVALID_RATING'],
    [{ request_id: rid, feedback: 'x', source: 'robot' }, 'INVALID_SOURCE'],
    [{ request_id: rid, feedback: 'x', metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, 'METADATA_TOO_LARGE'],
    [{ request_id: rid, feedback: 'x', metadata: { ['k'.repeat(65)]: 'v' } }, 'METADATA_TOO_LARGE'],
    [{ request_id: rid, feedback: 'x', metadata: { k: 'v'.repeat(513) } }, 'METADATA_TOO_LARGE'],
    [{ request_id: rid, feedback: 'x', metadata: { k: 1 } }, 'INVALID_INPUT'],
    [{ request_id: rid, feedback: 'x', ground_truth: { answers: 'a' } }, 'INVALID_INPUT'],
  ])('rejects %j with %s', (input, expected) => {
    expect(code(() => normalizeFeedback(input as any))).toBe(expected);
  });

  it('accepts every limit exactly', () => {
    const n = normalizeFeedback({
      request_id: rid,
      feedback: 'é'.repeat(8000),
      rating: 'neutral',
      source: 'agent',
      ground_truth: { answer: 'x'.repeat(8000), source_ids: Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(256, 'x')) },
      metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(512)])),
    });
    expect(n.groundTruth!.sourceIds).toHaveLength(100);
    expect(n.rating).toBe('neutral');
    expect(n.source).toBe('agent');
  });
});
