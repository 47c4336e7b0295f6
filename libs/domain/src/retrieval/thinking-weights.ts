/** Default weights of thinking mode (docs/retrieval.md): entity weights for expansion and the graph's share of the final score. */
export const THINKING_DEFAULTS = { queryEntity: 1, neighbour: 0.4, hitEntity: 0, topHits: 5, neighbours: 10, expansion: 50, rrfK: 10, graphWeight: 0.15 };

export type ThinkingWeights = typeof THINKING_DEFAULTS;

/** The variable that overrides a weight for tuning: `graphWeight` -> `THINKING_GRAPH_WEIGHT`. */
export const thinkingVariable = (weight: keyof ThinkingWeights): string => `THINKING_${weight.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
