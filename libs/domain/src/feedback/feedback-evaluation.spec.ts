import { evaluateRetrieval, scoreQuery } from './feedback-evaluation';

describe('feedback evaluation', () => {
  it('scores recall@k and the reciprocal rank over distinct items (chunks of one item count once)', () => {
    const s = scoreQuery({ requestId: 'q', retrieved: ['a', 'a', 'b', 'c', 'd'], relevant: ['c', 'z'] });
    expect(s.firstRelevantRank).toBe(3);
    expect(s.reciprocalRank).toBeCloseTo(1 / 3);
    expect(s.recallAt).toEqual({ 1: 0, 3: 0.5, 5: 0.5, 10: 0.5 });
  });

  it('a query whose relevant items were never retrieved scores zero', () => {
    const s = scoreQuery({ requestId: 'q', retrieved: ['a'], relevant: ['b'] });
    expect(s).toMatchObject({ firstRelevantRank: null, reciprocalRank: 0, recallAt: { 1: 0, 10: 0 } });
  });

  it('averages over queries with ground truth only', () => {
    const summary = evaluateRetrieval([
      { requestId: 'q1', retrieved: ['a', 'b'], relevant: ['a'] },
      { requestId: 'q2', retrieved: ['a', 'b'], relevant: ['b'] },
      { requestId: 'q3', retrieved: ['a', 'b'], relevant: [] },
    ]);
    expect(summary.queries).toBe(2);
    expect(summary.mrr).toBe(0.75);
    expect(summary.recallAt).toEqual({ 1: 0.5, 3: 1, 5: 1, 10: 1 });
  });

  it('is empty, not NaN, without judged queries', () => {
    expect(evaluateRetrieval([])).toMatchObject({ queries: 0, mrr: 0, recallAt: { 1: 0 } });
  });
});
