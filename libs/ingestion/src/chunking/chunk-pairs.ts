import { type Chunk, type ChunkPairsOptions, type UserAssistantPair, resolveChunkOptions } from './chunk';
import { type ContextLine, contextLine, truncateToTokens, withContext } from './context-line';
import { type PackedRange, type Unit, appendUnits, packUnits } from './pack-units';
import { paragraphRanges } from './text-ranges';
import { countTokens } from './token-count';

const USER_LABEL = 'User:';
const ASSISTANT_LABEL = 'Assistant:';
const PAIR_SEPARATOR = '\n\n';

interface PairSpan {
  start: number;
  end: number;
  userStart: number;
  userEnd: number;
  assistantStart: number;
  assistantEnd: number;
}

function labelled(label: string, message: string): string {
  return message ? `${label} ${message}` : label;
}

function layoutPairs(pairs: readonly UserAssistantPair[]): { transcript: string; spans: PairSpan[] } {
  let transcript = '';
  const spans: PairSpan[] = [];
  for (const pair of pairs) {
    const user = pair.user.trim();
    const assistant = pair.assistant.trim();
    if (!user && !assistant) continue;
    if (transcript) transcript += PAIR_SEPARATOR;
    const start = transcript.length;
    const userLine = labelled(USER_LABEL, user);
    const userEnd = start + userLine.length;
    const assistantStart = userEnd + 1 + ASSISTANT_LABEL.length + (assistant ? 1 : 0);
    transcript += `${userLine}\n${labelled(ASSISTANT_LABEL, assistant)}`;
    spans.push({ start, end: transcript.length, userStart: userEnd - user.length, userEnd, assistantStart, assistantEnd: transcript.length });
  }
  return { transcript, spans };
}

/**
 * The text `chunkPairs` offsets point into: each pair (messages trimmed, pairs with both messages
 * empty left out) as "User: …\nAssistant: …", pairs separated by a blank line.
 */
export function pairsTranscript(pairs: readonly UserAssistantPair[]): string {
  return layoutPairs(pairs).transcript;
}

/**
 * Chunks a conversation so that an exchange is never separated from its question. Consecutive pairs
 * that fit are packed together in order (no overlap between pairs). A pair larger than a chunk is
 * split: its answer is chunked as prose (with overlap) and every piece is led by the question's
 * `User:` line; a question too long for that line (over a quarter of the chunk) is first chunked
 * on its own, each piece labelled `User:`, and the answer's pieces carry its shortened first words.
 */
export function chunkPairs(pairs: readonly UserAssistantPair[], options: ChunkPairsOptions = {}): Chunk[] {
  const { maxTokens, overlapTokens, title } = resolveChunkOptions(options);
  const { transcript, spans } = layoutPairs(pairs);
  const context = contextLine(title, [], maxTokens);
  const budget = maxTokens - context.tokens;
  const chunks: Chunk[] = [];
  const emit = (text: string, startChar: number, endChar: number) =>
    chunks.push({ index: chunks.length, text: withContext(context, text), startChar, endChar });

  let pack: { start: number; end: number; tokens: number } | null = null;
  const flushPack = () => {
    if (pack) emit(transcript.slice(pack.start, pack.end), pack.start, pack.end);
    pack = null;
  };

  for (const span of spans) {
    const tokens = countTokens(transcript.slice(span.start, span.end));
    if (tokens <= budget) {
      if (pack && pack.tokens + tokens <= budget) {
        pack.end = span.end;
        pack.tokens += tokens;
      } else {
        flushPack();
        pack = { start: span.start, end: span.end, tokens };
      }
      continue;
    }
    flushPack();
    splitPair(transcript, span, budget, overlapTokens, emit);
  }
  flushPack();
  return chunks;
}

function splitPair(
  transcript: string,
  span: PairSpan,
  budget: number,
  overlapTokens: number,
  emit: (text: string, startChar: number, endChar: number) => void,
): void {
  const user = transcript.slice(span.userStart, span.userEnd);
  const userLine = labelled(USER_LABEL, user);
  const cap = Math.floor(budget / 4);
  let question: ContextLine = { text: userLine, tokens: countTokens(userLine) };

  if (question.tokens > cap) {
    const labelTokens = countTokens(USER_LABEL);
    const pieces = chunkRange(transcript, span.userStart, span.userEnd, budget - labelTokens, overlapTokens);
    for (const piece of pieces) emit(labelled(USER_LABEL, transcript.slice(piece.start, piece.end)), piece.start, piece.end);
    const shortened = `${labelled(USER_LABEL, truncateToTokens(user, Math.max(0, cap - labelTokens - 1)).text)} …`;
    question = { text: shortened, tokens: countTokens(shortened) };
  }

  const prefix = `${question.text}\n${ASSISTANT_LABEL} `;
  const pieces = chunkRange(transcript, span.assistantStart, span.assistantEnd, budget - countTokens(prefix), overlapTokens);
  for (const piece of pieces) emit(prefix + transcript.slice(piece.start, piece.end), piece.start, piece.end);
}

function chunkRange(text: string, start: number, end: number, budget: number, overlapTokens: number): PackedRange[] {
  const units: Unit[] = [];
  for (const paragraph of paragraphRanges(text, start, end)) appendUnits(text, paragraph, 'prose', budget, units);
  return packUnits(text, units, budget, Math.min(overlapTokens, Math.floor(budget / 2)));
}
