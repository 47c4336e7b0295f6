import { AUTO_ALPHA, resolveAlpha } from './alpha';

describe('query alpha', () => {
  it('"auto" and omitted are AUTO_ALPHA, the value chosen on SciFact train (bench/results/quality-train-sweep.md)', () => {
    expect(AUTO_ALPHA).toBe(0.15);
    for (const auto of [undefined, null, 'auto']) expect(resolveAlpha(auto)).toBe(AUTO_ALPHA);
  });

  it('takes a number from 0 to 1 as it is and refuses anything else', () => {
    expect([0, 0.3, 1].map(resolveAlpha)).toEqual([0, 0.3, 1]);
    for (const bad of [-0.1, 1.1, Number.NaN, '0.3', 'fast']) expect(() => resolveAlpha(bad)).toThrow(/alpha must be/);
  });
});
