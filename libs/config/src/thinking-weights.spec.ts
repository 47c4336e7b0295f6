import { configFromEnv } from './config';
import { THINKING_DEFAULTS, thinkingVariable, wideLimit } from '@crs/domain/retrieval/thinking-weights';

/** The weights the configuration reads from these variables. */
const thinkingWeights = (env: NodeJS.ProcessEnv) => configFromEnv(env, 'postgres://spec').retrieval.thinking;

describe('thinking weights', () => {
  it('defaults without overrides, and takes THINKING_<NAME> overrides', () => {
    expect(thinkingWeights({})).toEqual(THINKING_DEFAULTS);
    // chosen on SciFact train (bench/results/quality-train-sweep.md): a change is a new choice there
    expect(THINKING_DEFAULTS).toEqual({ queryEntity: 1, neighbour: 0.4, hitEntity: 0.3, topHits: 5, neighbours: 10, expansion: 50, rrfK: 3, graphWeight: 0.3, maxEntityChunks: 1000, wideFactor: 3, wideMin: 30 });
    expect(thinkingWeights({ THINKING_GRAPH_WEIGHT: '0.3', THINKING_RRF_K: '60' })).toEqual({ ...THINKING_DEFAULTS, graphWeight: 0.3, rrfK: 60 });
  });
  it('refuses a value that is not a non-negative number', () => {
    expect(() => thinkingWeights({ THINKING_GRAPH_WEIGHT: 'lots' })).toThrow(/THINKING_GRAPH_WEIGHT/);
    expect(() => thinkingWeights({ THINKING_TOP_HITS: '-1' })).toThrow(/THINKING_TOP_HITS/);
  });
  it("names each weight's variable", () => {
    expect(Object.keys(THINKING_DEFAULTS).map((k) => thinkingVariable(k as keyof typeof THINKING_DEFAULTS))).toEqual([
      'THINKING_QUERY_ENTITY', 'THINKING_NEIGHBOUR', 'THINKING_HIT_ENTITY', 'THINKING_TOP_HITS',
      'THINKING_NEIGHBOURS', 'THINKING_EXPANSION', 'THINKING_RRF_K', 'THINKING_GRAPH_WEIGHT', 'THINKING_MAX_ENTITY_CHUNKS',
      'THINKING_WIDE_FACTOR', 'THINKING_WIDE_MIN',
    ]);
  });
  it('sizes the wider retrieval: max(min, factor × limit), never below the limit', () => {
    expect([1, 10, 11, 40].map((limit) => wideLimit(THINKING_DEFAULTS, limit))).toEqual([30, 30, 33, 120]);
    const narrow = thinkingWeights({ THINKING_WIDE_FACTOR: '1.5', THINKING_WIDE_MIN: '15' });
    expect([1, 10, 11].map((limit) => wideLimit(narrow, limit))).toEqual([15, 15, 17]);
    expect(wideLimit({ wideFactor: 0.5, wideMin: 0 }, 10)).toBe(10);
  });
});
