export const DOCUMENT_FORMATS = ['txt', 'markdown', 'html', 'pdf', 'docx', 'csv', 'json'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

export interface ParseInput {
  bytes: Buffer;
  /** The uploaded file's name; only its extension is used. */
  filename: string;
  /** The upload's Content-Type, parameters allowed (`text/csv; charset=windows-1252`). */
  contentType?: string;
}

export interface ParsedDocument {
  /** Normalized text: NFC, `\n` line ends, no trailing spaces, at most one blank line in a row. */
  text: string;
  /** True when `text` is Markdown (markdown files, and HTML/DOCX whose headings become `#` lines). */
  isMarkdown: boolean;
  /** The document's own title (HTML <title>, PDF metadata, first level-1 heading), if it has one. */
  title: string | null;
  format: DocumentFormat;
  /** PDF only: page count. */
  pages?: number;
}
