/**
 * The token approximation every chunk size is measured in. Deliberately simple, fast and
 * independent of any model or ICU version, so chunk boundaries never change under us:
 *
 * - a run of letters, digits, marks and underscores counts one token per started 10 characters
 *   (so ordinary words count 1, "internationalization" 2, a 4 000-character blob 400);
 * - each Han, Hiragana or Katakana character counts 1 (those scripts do not separate words by spaces);
 * - every other non-space character (punctuation, symbols, emoji) counts 1;
 * - whitespace counts 0.
 *
 * For English prose that is about the word count plus punctuation; model tokenizers (sub-word)
 * usually count somewhat more, so leave them headroom when choosing maxTokens.
 */
export const CHARS_PER_WORD_TOKEN = 10;

const IDEOGRAPHIC = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}';
// `v` flag (Node 20+) for the set difference; built with RegExp() because the TS target (ES2022) rejects `v` literals.
const TOKEN_PATTERN = new RegExp(`([${IDEOGRAPHIC}])|([[\\p{L}\\p{N}\\p{M}_]--[${IDEOGRAPHIC}]]+)|\\S`, 'gv');

export function countTokens(text: string): number {
  TOKEN_PATTERN.lastIndex = 0;
  let count = 0;
  let match: RegExpExecArray | null;
  while ((match = TOKEN_PATTERN.exec(text)) !== null) {
    count += match[2] === undefined ? 1 : Math.ceil(match[0].length / CHARS_PER_WORD_TOKEN);
  }
  return count;
}

export interface TokenSpan {
  start: number;
  end: number;
  tokens: number;
}

/** Calls `visit` for each token of `text` in order, with its offsets (countTokens is the sum of `tokens`). */
export function forEachTokenSpan(text: string, visit: (start: number, end: number, tokens: number) => void): void {
  const pattern = new RegExp(TOKEN_PATTERN); // own lastIndex: `visit` may count tokens itself
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    const { index } = match;
    const length = match[0].length;
    visit(index, index + length, match[2] === undefined ? 1 : Math.ceil(length / CHARS_PER_WORD_TOKEN));
  }
}

export function tokenSpans(text: string): TokenSpan[] {
  const spans: TokenSpan[] = [];
  forEachTokenSpan(text, (start, end, tokens) => spans.push({ start, end, tokens }));
  return spans;
}
