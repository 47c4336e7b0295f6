/**
 * Conversation context for keyword ranking of memories (docs/retrieval.md, "Conversation context").
 *
 * A memory is often one turn of a conversation, and a turn's words answer the turn before it: "What did you
 * research?" / "Adoption agencies." A question about it matches the asking turn, while the answer is the next one.
 * So a memory that matches the query lends part of its keyword score to its neighbours in the same conversation:
 * the next memories (`after[0]` of its score to the next one, `after[1]` to the one after that) and the previous one
 * (`before[0]`). A neighbour that does not match the query itself becomes a candidate with the lent score alone.
 *
 * Neighbours are the memories ingested right before and after, in the same collection, with the same non-empty
 * `additional_metadata` (what marks a conversation: a session or thread id, ...) and user name (a change of either
 * ends the conversation), and not inferred. Memories without additional metadata have no neighbours: facts stored
 * one after another are not turns of a conversation. Only hits
 * the caller may see lend, and a neighbour is checked like every other hit, so nothing is served or ranked on
 * content the caller cannot see. Computed at query time from the items read model: nothing is stored in the search
 * index, so deletion, ACL changes and rebuilds need nothing more.
 */
export interface ContextWeights {
  /** Share of a hit's keyword score lent to the 1st, 2nd, ... memory after it. */
  after: number[];
  /** Share lent to the 1st, ... memory before it. */
  before: number[];
}

/** Measured on the development benchmarks (LoCoMo dev; docs/retrieval.md). */
export const CONTEXT_DEFAULTS: ContextWeights = { after: [0.5, 0.25], before: [0.25] };

/**
 * How far a conversation is followed (each weight list is at most this long). The weights are settings
 * (`RETRIEVAL_CONTEXT_AFTER` / `RETRIEVAL_CONTEXT_BEFORE`, read by config.ts), for tuning without a rebuild.
 */
export const MAX_CONTEXT_DISTANCE = 3;

/** A neighbour of a hit: `distance` > 0 after it, < 0 before it (only unbroken runs of the same conversation). */
export interface Neighbour {
  itemKey: string;
  distance: number;
}

/**
 * The keyword score of every item after lending: each lending item's score (its best chunk) is added, times the
 * weight of the distance, to each neighbour's score. Lending is from the hits' own scores only (no chains).
 */
export function lendScores(
  itemScores: Map<string, number>,
  neighbours: Map<string, Neighbour[]>,
  weights: ContextWeights,
): Map<string, number> {
  const out = new Map(itemScores);
  for (const [key, score] of itemScores) {
    for (const n of neighbours.get(key) ?? []) {
      const w = n.distance > 0 ? weights.after[n.distance - 1] : weights.before[-n.distance - 1];
      if (!w) continue;
      out.set(n.itemKey, (out.get(n.itemKey) ?? 0) + w * score);
    }
  }
  return out;
}
