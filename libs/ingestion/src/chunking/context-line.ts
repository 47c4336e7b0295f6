import { countTokens } from './token-count';
import { wordRanges } from './text-ranges';

export interface ContextLine {
  /** '' when there is no context. */
  text: string;
  tokens: number;
}

/** Share of maxTokens a context line may take; the rest is left for the body. */
const CONTEXT_SHARE = 4;
export const CONTEXT_SEPARATOR = ' > ';

/**
 * "Title > Install > Linux": the line that leads every chunk of a section, so a chunk found on
 * its own still says where it came from. Capped at maxTokens / 4: outer headings are dropped
 * first, then the innermost is cut at a word boundary.
 */
export function contextLine(title: string | null, headingPath: readonly string[], maxTokens: number): ContextLine {
  const sameAsTop = title !== null && headingPath[0] !== undefined && headingPath[0].toLowerCase() === title.toLowerCase();
  const parts = title && !sameAsTop ? [title, ...headingPath] : [...headingPath];
  if (parts.length === 0) return { text: '', tokens: 0 };
  const cap = Math.floor(maxTokens / CONTEXT_SHARE);
  while (parts.length > 0) {
    const text = parts.join(CONTEXT_SEPARATOR);
    const tokens = countTokens(text);
    if (tokens <= cap) return { text, tokens };
    if (parts.length === 1) return truncateToTokens(text, cap);
    parts.shift();
  }
  return { text: '', tokens: 0 };
}

/** The longest word-boundary prefix of `text` within `maxTokens`. */
export function truncateToTokens(text: string, maxTokens: number): ContextLine {
  let tokens = 0;
  let end = 0;
  for (const word of wordRanges(text, 0, text.length)) {
    const wordTokens = countTokens(text.slice(word.start, word.end));
    if (tokens + wordTokens > maxTokens) break;
    tokens += wordTokens;
    end = word.end;
  }
  return { text: text.slice(0, end), tokens };
}

/** `context` then `body`, on separate lines. */
export function withContext(context: ContextLine, body: string): string {
  return context.text ? `${context.text}\n${body}` : body;
}
