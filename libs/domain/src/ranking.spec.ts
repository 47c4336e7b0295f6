import { applyRecency, fuseScores } from './ranking';

describe('fusion', () => {
  const kw = [{ id: 'a', score: 10 }, { id: 'b', score: 5 }, { id: 'c', score: 0 }];
  const vec = [{ id: 'c', score: 0.9 }, { id: 'b', score: 0.5 }, { id: 'd', score: 0.1 }];
  it('alpha 0 ranks by keyword only, alpha 1 by vector only', () => {
    expect(fuseScores(kw, vec, 0).map((x) => x.id).slice(0, 2)).toEqual(['a', 'b']);
    expect(fuseScores(kw, vec, 1)[0].id).toBe('c');
  });
  it('a candidate found by both lists beats one found by one when alpha balances them', () => {
    const fused = fuseScores([{ id: 'x', score: 3 }, { id: 'y', score: 2 }, { id: 'z', score: 1 }], [{ id: 'y', score: 0.8 }, { id: 'w', score: 0.7 }, { id: 'q', score: 0.1 }], 0.5);
    expect(fused[0].id).toBe('y');
  });
  it('is deterministic on ties', () => {
    expect(fuseScores([{ id: 'b', score: 1 }, { id: 'a', score: 1 }], [], 0).map((x) => x.id)).toEqual(['a', 'b']);
  });
  it('recency bias prefers newer items only when asked', () => {
    expect(applyRecency(0.5, 365 * 86_400_000, 0)).toBe(0.5);
    expect(applyRecency(0.5, 0, 0.5)).toBeGreaterThan(applyRecency(0.5, 365 * 86_400_000, 0.5));
  });
});
