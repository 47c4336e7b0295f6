import { THINKING_DEFAULTS, thinkingWeights } from './thinking.service';

describe('thinking weights', () => {
  it('defaults without overrides, and takes THINKING_<NAME> overrides', () => {
    expect(thinkingWeights({})).toEqual(THINKING_DEFAULTS);
    expect(thinkingWeights({ THINKING_GRAPH_WEIGHT: '0.3', THINKING_RRF_K: '60' })).toEqual({ ...THINKING_DEFAULTS, graphWeight: 0.3, rrfK: 60 });
  });
  it('refuses a value that is not a non-negative number', () => {
    expect(() => thinkingWeights({ THINKING_GRAPH_WEIGHT: 'lots' })).toThrow(/THINKING_GRAPH_WEIGHT/);
    expect(() => thinkingWeights({ THINKING_TOP_HITS: '-1' })).toThrow(/THINKING_TOP_HITS/);
  });
});
