/**
 * Default weights of thinking mode (docs/retrieval.md): entity weights for expansion and the graph's share of the final
 * score. Chosen on the SciFact BEIR train split (809 queries, at AUTO_ALPHA), not on the test split: the best nDCG@10
 * among the settings whose graph still brings a chunk sharing no word with the query into the top 3
 * (test/e2e/graph-thinking.e2e.ts); graph weight and k on a grid, then each other weight one at a time.
 * bench/results/quality-train-sweep.md. `maxEntityChunks` bounds the graph expansion's work: an entity mentioned by more
 * chunks is left out of it (docs/retrieval.md, "Thinking mode"); 0 leaves none out. `wideFactor` and `wideMin` size the
 * wider fast retrieval thinking re-ranks: max(wideMin, wideFactor × max_results) results.
 */
export const THINKING_DEFAULTS = { queryEntity: 1, neighbour: 0.4, hitEntity: 0.3, topHits: 5, neighbours: 10, expansion: 50, rrfK: 3, graphWeight: 0.3, maxEntityChunks: 1000, wideFactor: 3, wideMin: 30 };

export type ThinkingWeights = typeof THINKING_DEFAULTS;

/** The variable that overrides a weight for tuning: `graphWeight` -> `THINKING_GRAPH_WEIGHT`. */
export const thinkingVariable = (weight: keyof ThinkingWeights): string => `THINKING_${weight.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

/** How many results the wider fast retrieval that thinking re-ranks asks for: max(wideMin, wideFactor × limit), at least `limit`. */
export const wideLimit = (weights: Pick<ThinkingWeights, 'wideFactor' | 'wideMin'>, limit: number): number =>
  Math.max(Math.ceil(limit * weights.wideFactor), Math.floor(weights.wideMin), limit);
