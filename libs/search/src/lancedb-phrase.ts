/**
 * Phrase matching for LanceDB full-text indexes built without word positions.
 *
 * Positions make LanceDB's full-text index cost twice as much to fold new rows into (every optimize rewrites it whole),
 * so the index keeps none, and a phrase query runs as an `and` match whose hits are checked here: the query and each
 * hit's text go through the index's own tokenizer (`Table.tokenize`: the same lowercasing, ASCII folding, stop words
 * and stemming), and a hit is kept when the query's tokens occur in it at the same relative positions. Stop words
 * leave gaps in both (a removed word keeps its position), so "state of the art" matches "state, of the art" but not
 * "state of art": what LanceDB's own phrase query over positions returns.
 */

/** A token as LanceDB's tokenizer reports it. */
export interface PositionedToken {
  text: string;
  position: number;
}

/**
 * Put between texts tokenized in one call (the tokenizer's cost is mostly per call). Its token is read back from the
 * tokenizer, not assumed; a text that contains it itself is found by counting (splitByBoundary).
 */
export const PHRASE_BOUNDARY = 'crsphraseboundaryzq';

/** Whether `text` (its tokens) holds the phrase (the query's tokens, relative positions kept). */
export function holdsPhrase(phrase: PositionedToken[], text: PositionedToken[]): boolean {
  if (phrase.length === 0) return false;
  const at = new Map<string, Set<number>>();
  for (const t of text) {
    let positions = at.get(t.text);
    if (!positions) at.set(t.text, (positions = new Set()));
    positions.add(t.position);
  }
  const first = phrase[0];
  const starts = at.get(first.text);
  if (!starts) return false;
  for (const start of starts) {
    if (phrase.every((t) => at.get(t.text)?.has(start + t.position - first.position) === true)) return true;
  }
  return false;
}

/**
 * The tokens of `count` texts joined by the boundary, split back into one list per text; undefined when the boundary
 * token does not come back exactly `count - 1` times (a text contains it), so the caller tokenizes one by one.
 */
export function splitByBoundary(tokens: PositionedToken[], boundary: string, count: number): PositionedToken[][] | undefined {
  const out: PositionedToken[][] = [[]];
  for (const t of tokens) {
    if (t.text === boundary) out.push([]);
    else out[out.length - 1].push(t);
  }
  return out.length === count ? out : undefined;
}
