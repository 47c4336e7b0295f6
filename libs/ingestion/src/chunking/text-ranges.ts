/**
 * Boundaries inside a text, as [start, end) offsets into the original string (never copies that
 * drift from it). Every range is trimmed of surrounding whitespace, so ranges cut only between words.
 */
export interface TextRange {
  start: number;
  end: number;
}

const WHITESPACE = /\s/;

export function trimRange(text: string, start: number, end: number): TextRange | null {
  while (start < end && WHITESPACE.test(text[start])) start++;
  while (end > start && WHITESPACE.test(text[end - 1])) end--;
  return start < end ? { start, end } : null;
}

function rangesBetween(text: string, start: number, end: number, separator: RegExp): TextRange[] {
  const ranges: TextRange[] = [];
  const pattern = new RegExp(separator.source, 'g');
  pattern.lastIndex = start;
  let cursor = start;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null && match.index < end) {
    const range = trimRange(text, cursor, match.index);
    if (range) ranges.push(range);
    cursor = match.index + match[0].length;
    if (match[0].length === 0) pattern.lastIndex++;
  }
  const last = trimRange(text, cursor, end);
  if (last) ranges.push(last);
  return ranges;
}

/** Paragraphs: separated by one or more blank lines. */
export function paragraphRanges(text: string, start: number, end: number): TextRange[] {
  return rangesBetween(text, start, end, /\n[ \t\r\f\v]*\n/);
}

export function lineRanges(text: string, start: number, end: number): TextRange[] {
  return rangesBetween(text, start, end, /\n/);
}

/** Whitespace-separated words (a word here may hold punctuation: "don't", "e.g.,"). */
export function wordRanges(text: string, start: number, end: number): TextRange[] {
  const ranges: TextRange[] = [];
  const pattern = /\S+/g;
  pattern.lastIndex = start;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null && match.index < end) {
    ranges.push({ start: match.index, end: Math.min(end, match.index + match[0].length) });
  }
  return ranges;
}

/**
 * Candidate sentence ends: CJK full stops; `.`, `!`, `?`, `…` (with closing quotes or brackets)
 * followed by whitespace; and a line break that starts a list item.
 */
const SENTENCE_END = /[。！？]+[」』”’)）]*|[.!?…]+["'”’)\]]*(?=\s)|\n(?=[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t])/g;

/** Lowercased words that take a period without ending a sentence. */
const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'mt', 'vs', 'etc', 'al', 'cf', 'approx', 'fig', 'figs',
  'no', 'nos', 'vol', 'vols', 'pp', 'ch', 'sec', 'eq', 'ref', 'refs', 'inc', 'ltd', 'co', 'corp', 'dept',
  'est', 'gen', 'gov', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec',
  'mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun', 'min', 'max', 'avg', 'resp', 'incl', 'excl',
]);

const LETTER = /\p{L}/u;
const LOWERCASE_START = /^\s*\p{Ll}/u;

function isSentenceEnd(text: string, terminator: string, index: number, after: number): boolean {
  if (terminator.startsWith('\n') || /^[。！？]/.test(terminator)) return true;
  // "e.g. this", "see fig. three": a lowercase continuation means the sentence goes on.
  if (LOWERCASE_START.test(text.slice(after, after + 8))) return false;
  if (terminator !== '.') return true;
  let wordStart = index;
  while (wordStart > 0 && LETTER.test(text[wordStart - 1])) wordStart--;
  const word = text.slice(wordStart, index);
  // Initials ("J. R. Tolkien") and the pieces of "e.g." / "i.e.".
  if (word.length === 1) return false;
  return !ABBREVIATIONS.has(word.toLowerCase());
}

/** Sentences of [start, end): deterministic rules, no model, no ICU dependence. */
export function sentenceRanges(text: string, start: number, end: number): TextRange[] {
  const ranges: TextRange[] = [];
  SENTENCE_END.lastIndex = start;
  let cursor = start;
  let match: RegExpExecArray | null;
  while ((match = SENTENCE_END.exec(text)) !== null && match.index < end) {
    const after = Math.min(end, match.index + match[0].length);
    if (!isSentenceEnd(text, match[0], match.index, after)) continue;
    const range = trimRange(text, cursor, after);
    if (range) ranges.push(range);
    cursor = after;
  }
  const last = trimRange(text, cursor, end);
  if (last) ranges.push(last);
  return ranges;
}
