import { CHARS_PER_WORD_TOKEN, countTokens, forEachTokenSpan } from './token-count';
import { type TextRange, lineRanges, sentenceRanges, wordRanges } from './text-ranges';

/**
 * `prose` is cut at sentences, then lines, then words; `verbatim` (code, tables, front matter)
 * at lines, then words, so a code line is never split while whole lines fit.
 */
export type UnitKind = 'prose' | 'verbatim';

/** An indivisible run of the source that fits a chunk on its own. */
export interface Unit extends TextRange {
  tokens: number;
  kind: UnitKind;
}

type Splitter = (text: string, start: number, end: number) => TextRange[];
const SPLIT_ORDER: Record<UnitKind, Splitter[]> = {
  prose: [sentenceRanges, lineRanges, wordRanges],
  verbatim: [lineRanges, wordRanges],
};

/** Appends `range` to `out` as one unit if it fits `budget`, else as the pieces of the finest split needed. */
export function appendUnits(text: string, range: TextRange, kind: UnitKind, budget: number, out: Unit[]): void {
  splitToFit(text, range, kind, budget, 0, countTokens(text.slice(range.start, range.end)), out);
}

function splitToFit(text: string, range: TextRange, kind: UnitKind, budget: number, level: number, tokens: number, out: Unit[]): void {
  if (tokens <= budget) {
    out.push({ start: range.start, end: range.end, tokens, kind });
    return;
  }
  const splitters = SPLIT_ORDER[kind];
  if (level >= splitters.length) {
    splitOversizedWord(text, range, kind, budget, out);
    return;
  }
  const pieces = splitters[level]!(text, range.start, range.end);
  if (pieces.length <= 1) {
    splitToFit(text, range, kind, budget, level + 1, tokens, out);
    return;
  }
  for (const piece of pieces) {
    splitToFit(text, piece, kind, budget, level + 1, countTokens(text.slice(piece.start, piece.end)), out);
  }
}

/**
 * The one place a word is cut: a single whitespace-free word longer than a whole chunk (a blob,
 * a minified line). It is cut between its tokens, and a letter run longer than the budget every
 * `budget * CHARS_PER_WORD_TOKEN` characters (never inside a surrogate pair).
 */
function splitOversizedWord(text: string, range: TextRange, kind: UnitKind, budget: number, out: Unit[]): void {
  let piece: Unit | null = null;
  forEachTokenSpan(text.slice(range.start, range.end), (spanStart, spanEnd, tokens) => {
    let start = range.start + spanStart;
    const end = range.start + spanEnd;
    if (tokens <= budget) {
      if (piece && piece.tokens + tokens <= budget) {
        piece.end = end;
        piece.tokens += tokens;
        return;
      }
      if (piece) out.push(piece);
      piece = { start, end, tokens, kind };
      return;
    }
    if (piece) out.push(piece);
    piece = null;
    while (start < end) {
      let cut = Math.min(end, start + budget * CHARS_PER_WORD_TOKEN);
      if (cut < end && isLowSurrogate(text.charCodeAt(cut))) cut--;
      out.push({ start, end: cut, tokens: Math.ceil((cut - start) / CHARS_PER_WORD_TOKEN), kind });
      start = cut;
    }
  });
  if (piece) out.push(piece);
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** A chunk body as a span of the source; `tokens` is an upper bound of countTokens of that span. */
export interface PackedRange extends TextRange {
  tokens: number;
}

/**
 * Greedy packing: units are added in order while the chunk stays within `budget`. Each chunk after
 * the first starts with the previous chunk's tail (whole trailing units, then trailing sentences or
 * lines, then trailing words) of at most `overlapTokens`, and only as much as leaves room for the
 * next unit. The overlap is always a strict suffix of the previous chunk, so every chunk adds new text.
 */
export function packUnits(text: string, units: readonly Unit[], budget: number, overlapTokens: number): PackedRange[] {
  const packed: PackedRange[] = [];
  let current: { start: number; tokens: number; firstUnit: number; lastUnit: number } | null = null;
  for (let i = 0; i < units.length; i++) {
    const unit = units[i]!;
    if (current && current.tokens + unit.tokens > budget) {
      packed.push({ start: current.start, end: units[current.lastUnit]!.end, tokens: current.tokens });
      const tail = overlapTail(text, units, current.firstUnit, current.lastUnit, Math.min(overlapTokens, budget - unit.tokens));
      current = tail ? { start: tail.start, tokens: tail.tokens, firstUnit: i, lastUnit: i } : null;
    }
    current ??= { start: unit.start, tokens: 0, firstUnit: i, lastUnit: i };
    current.tokens += unit.tokens;
    current.lastUnit = i;
  }
  if (current) packed.push({ start: current.start, end: units[current.lastUnit]!.end, tokens: current.tokens });
  return packed;
}

function overlapTail(
  text: string,
  units: readonly Unit[],
  firstUnit: number,
  lastUnit: number,
  limit: number,
): { start: number; tokens: number } | null {
  if (limit <= 0) return null;
  let tokens = 0;
  let start = -1;
  for (let i = lastUnit; i >= firstUnit; i--) {
    const unit = units[i]!;
    if (i > firstUnit && tokens + unit.tokens <= limit) {
      tokens += unit.tokens;
      start = unit.start;
      continue;
    }
    // Words only when not even one sentence fits: an overlap that starts mid-sentence is a last resort.
    const partial = partialTail(text, unit, limit - tokens, tokens === 0);
    if (partial) {
      tokens += partial.tokens;
      start = partial.start;
    }
    break;
  }
  return start < 0 ? null : { start, tokens };
}

/** The longest strict suffix of `unit` in whole sentences (or lines), else in whole words, within `room` tokens. */
function partialTail(text: string, unit: Unit, room: number, allowWords: boolean): { start: number; tokens: number } | null {
  if (room <= 0) return null;
  const splitters: Splitter[] = unit.kind === 'prose' ? [sentenceRanges] : [lineRanges];
  if (allowWords) splitters.push(wordRanges);
  for (const split of splitters) {
    const pieces = split(text, unit.start, unit.end);
    let tokens = 0;
    let start = -1;
    for (let j = pieces.length - 1; j >= 1; j--) {
      const pieceTokens = countTokens(text.slice(pieces[j]!.start, pieces[j]!.end));
      if (tokens + pieceTokens > room) break;
      tokens += pieceTokens;
      start = pieces[j]!.start;
    }
    if (start >= 0) return { start, tokens };
  }
  return null;
}
