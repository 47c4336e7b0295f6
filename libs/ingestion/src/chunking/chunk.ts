/** A piece of a document sized for embedding and retrieval. */
export interface Chunk {
  /** 0-based position in the output. */
  index: number;
  /** What gets embedded and indexed: the context line (title / heading path), if any, then the body. */
  text: string;
  /**
   * The body's span in the chunked source, half-open [startChar, endChar), in UTF-16 code units.
   * Without a context line, `text === source.slice(startChar, endChar)`. For `chunkPairs` the
   * source is `pairsTranscript(pairs)`.
   */
  startChar: number;
  endChar: number;
  /** Markdown only: the headings enclosing the body, outermost first (`['Install', 'Linux']`). */
  headingPath?: string[];
}

export interface ChunkTextOptions {
  /** Split by heading sections first and keep code blocks and tables whole where they fit. */
  isMarkdown?: boolean;
  /** Upper bound for every chunk's `countTokens(text)`, context line included. Default 256, at least 16. */
  maxTokens?: number;
  /**
   * Tokens of the previous chunk's tail repeated at the start of the next one, below maxTokens / 2.
   * Default min(32, floor(maxTokens / 8)): 32 for the default maxTokens.
   */
  overlapTokens?: number;
  /** Document title; leads the context line of every chunk (not repeated when it equals the top heading). */
  title?: string | null;
}

export type ChunkPairsOptions = Omit<ChunkTextOptions, 'isMarkdown'>;

/** One exchange of a conversation memory. */
export interface UserAssistantPair {
  user: string;
  assistant: string;
}

export const DEFAULT_MAX_TOKENS = 256;
export const DEFAULT_OVERLAP_TOKENS = 32;
export const MIN_MAX_TOKENS = 16;

export interface ResolvedChunkOptions {
  maxTokens: number;
  overlapTokens: number;
  title: string | null;
}

export function resolveChunkOptions(options: ChunkPairsOptions): ResolvedChunkOptions {
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const overlapTokens = options.overlapTokens ?? Math.min(DEFAULT_OVERLAP_TOKENS, Math.floor(maxTokens / 8));
  if (!Number.isInteger(maxTokens) || maxTokens < MIN_MAX_TOKENS) {
    throw new RangeError(`maxTokens must be an integer >= ${MIN_MAX_TOKENS}, got ${maxTokens}`);
  }
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens * 2 >= maxTokens) {
    throw new RangeError(`overlapTokens must be an integer >= 0 and below maxTokens / 2, got ${overlapTokens}`);
  }
  const title = options.title?.trim() || null;
  return { maxTokens, overlapTokens, title };
}
