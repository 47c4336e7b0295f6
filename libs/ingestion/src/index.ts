export { parseDocument, type ParseOptions } from './parsers/parse-document';
export { detectFormat, type DetectedFormat } from './parsers/detect-format';
export { ParseError, type ParseErrorCode } from './parsers/parse-error';
export { DOCUMENT_FORMATS, type DocumentFormat, type ParseInput, type ParsedDocument } from './parsers/parsed-document';
export type { PdfExtractionOptions } from './parsers/pdf-text-extraction';

export { chunkText } from './chunking/chunk-text';
export { chunkPairs, pairsTranscript } from './chunking/chunk-pairs';
export { countTokens, CHARS_PER_WORD_TOKEN } from './chunking/token-count';
export {
  DEFAULT_MAX_TOKENS,
  DEFAULT_OVERLAP_TOKENS,
  MIN_MAX_TOKENS,
  type Chunk,
  type ChunkPairsOptions,
  type ChunkTextOptions,
  type UserAssistantPair,
} from './chunking/chunk';
