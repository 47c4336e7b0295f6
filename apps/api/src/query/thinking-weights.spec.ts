import { THINKING_DEFAULTS, thinkingWeights } from './thinking.service';

describe('thinking weights', () => {
  it('defaults without overrides, and takes THINKING_<NAME> overrides', () => {
    expect(thinkingWeights({})).toEqual(THINKING_DEFAULTS);
    // chosen on SciFact train (bench/results/quality-train-sweep.md): a change is a new choice there
    expect(THINKING_DEFAULTS).toEqual({ queryEntity: 1, neighbour: 0.4, hitEntity: 0.3, topHits: 5, neighbours: 10, expansion: 50, rrfK: 3, graphWeight: 0.3 });
    expect(thinkingWeights({ THINKING_GRAPH_WEIGHT: '0.5', THINKING_RRF_K: '60' })).toEqual({ ...THINKING_DEFAULTS, graphWeight: 0.5, rrfK: 60 });
  });
  it('refuses a value that is not a non-negative number', () => {
    expect(() => thinkingWeights({ THINKING_GRAPH_WEIGHT: 'lots' })).toThrow(/THINKING_GRAPH_WEIGHT/);
    expect(() => thinkingWeights({ THINKING_TOP_HITS: '-1' })).toThrow(/THINKING_TOP_HITS/);
  });
});
