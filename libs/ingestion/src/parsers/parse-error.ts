import type { DocumentFormat } from './parsed-document';

/**
 * - UNSUPPORTED_FORMAT: not one of the formats we read (or not recognisable as one).
 * - CORRUPT_FILE: claims a supported format but cannot be read as it (damaged, truncated, not valid UTF-8).
 * - EMPTY_DOCUMENT: readable, but holds no text (blank file, scanned PDF without a text layer).
 * - ENCRYPTED_PDF: the PDF needs a password to open.
 * - CONTENT_TOO_LARGE: the file expands past what is read (a DOCX whose parts unzip to more than 100 MiB).
 */
export type ParseErrorCode = 'UNSUPPORTED_FORMAT' | 'CORRUPT_FILE' | 'EMPTY_DOCUMENT' | 'ENCRYPTED_PDF' | 'CONTENT_TOO_LARGE';

/** The only error parseDocument throws; library errors are kept as `cause`, never thrown as is. */
export class ParseError extends Error {
  readonly format: DocumentFormat | null;

  constructor(
    readonly code: ParseErrorCode,
    message: string,
    options: { format?: DocumentFormat | null; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ParseError';
    this.format = options.format ?? null;
  }
}
