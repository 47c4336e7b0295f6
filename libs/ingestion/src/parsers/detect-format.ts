import { extname } from 'node:path';
import { ParseError } from './parse-error';
import type { DocumentFormat, ParseInput } from './parsed-document';
import { looksBinary } from './text-decoding';

export interface DetectedFormat {
  format: DocumentFormat;
  /** What decided: the Content-Type, the file extension, or the bytes themselves. */
  detectedBy: 'content-type' | 'extension' | 'content';
  /** The Content-Type's charset parameter, when given. */
  charset: string | null;
  /** CSV only: tab-separated (`.tsv`, `text/tab-separated-values`). */
  tabSeparated: boolean;
  /** JSON only: one JSON value per line (`.jsonl`, `.ndjson`, `application/x-ndjson`). */
  jsonLines: boolean;
}

const DOCX_MEDIA_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const MEDIA_TYPES: Record<string, DocumentFormat> = {
  'text/plain': 'txt',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  [DOCX_MEDIA_TYPE]: 'docx',
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'application/json': 'json',
  'text/json': 'json',
  'application/x-ndjson': 'json',
  'application/jsonl': 'json',
  'application/x-jsonlines': 'json',
};
const JSON_LINES_MEDIA_TYPES = new Set(['application/x-ndjson', 'application/jsonl', 'application/x-jsonlines']);

/**
 * Content types that say little about the bytes: browsers send text/plain for .md and .csv files
 * and Windows sends application/vnd.ms-excel for .csv, so a known extension overrides them.
 */
const WEAK_MEDIA_TYPES = new Set(['text/plain', 'application/octet-stream', 'binary/octet-stream', 'application/vnd.ms-excel', 'application/x-unknown', '']);

const EXTENSIONS: Record<string, DocumentFormat> = {
  '.txt': 'txt',
  '.text': 'txt',
  '.log': 'txt',
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdown': 'markdown',
  '.mkd': 'markdown',
  '.html': 'html',
  '.htm': 'html',
  '.xhtml': 'html',
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.json': 'json',
  '.jsonl': 'json',
  '.ndjson': 'json',
};

/** Formats people upload that we do not read, named so the error can say what was sent. */
const UNSUPPORTED: Record<string, string> = {
  '.doc': 'legacy Word (.doc)',
  '.xls': 'Excel (.xls)',
  '.xlsx': 'Excel (.xlsx)',
  '.ppt': 'PowerPoint (.ppt)',
  '.pptx': 'PowerPoint (.pptx)',
  '.odt': 'OpenDocument text (.odt)',
  '.rtf': 'RTF',
  '.zip': 'ZIP archive',
  'application/msword': 'legacy Word (.doc)',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'Excel (.xlsx)',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'PowerPoint (.pptx)',
  'application/vnd.ms-powerpoint': 'PowerPoint (.ppt)',
  'application/vnd.oasis.opendocument.text': 'OpenDocument text (.odt)',
  'application/rtf': 'RTF',
  'text/rtf': 'RTF',
  'application/zip': 'ZIP archive',
};

function parseContentType(contentType: string | undefined): { mediaType: string; charset: string | null } {
  const [type = '', ...params] = (contentType ?? '').split(';');
  let charset: string | null = null;
  for (const param of params) {
    const [key, value] = param.split('=').map((s) => s.trim());
    if (key?.toLowerCase() === 'charset' && value) charset = value.replace(/^"|"$/g, '').toLowerCase();
  }
  return { mediaType: type.trim().toLowerCase(), charset };
}

function unsupported(what: string): ParseError {
  return new ParseError(
    'UNSUPPORTED_FORMAT',
    `${what} files are not supported; upload plain text, Markdown, HTML, PDF, DOCX, CSV or JSON.`,
  );
}

/**
 * Content-Type first (unless it is a generic one and the extension is known), then the file
 * extension, then the bytes: `%PDF-` header, a ZIP holding word/document.xml, valid JSON
 * starting with { or [, HTML tags, Markdown headings or fences, else plain text.
 */
export function detectFormat(input: ParseInput): DetectedFormat {
  const { mediaType, charset } = parseContentType(input.contentType);
  const extension = extname(input.filename ?? '').toLowerCase();
  const base = { charset, tabSeparated: false, jsonLines: false };
  const withHints = (format: DocumentFormat, detectedBy: DetectedFormat['detectedBy']): DetectedFormat => ({
    ...base,
    format,
    detectedBy,
    tabSeparated: format === 'csv' && (extension === '.tsv' || mediaType === 'text/tab-separated-values'),
    jsonLines: format === 'json' && (extension === '.jsonl' || extension === '.ndjson' || JSON_LINES_MEDIA_TYPES.has(mediaType)),
  });

  const byMediaType = MEDIA_TYPES[mediaType] ?? (mediaType.endsWith('+json') ? 'json' : undefined);
  if (byMediaType && !WEAK_MEDIA_TYPES.has(mediaType)) return withHints(byMediaType, 'content-type');
  if (UNSUPPORTED[mediaType]) throw unsupported(UNSUPPORTED[mediaType]);
  if (/^(image|audio|video|font)\//.test(mediaType)) throw unsupported(mediaType);

  const byExtension = EXTENSIONS[extension];
  if (byExtension) return withHints(byExtension, 'extension');
  if (UNSUPPORTED[extension]) throw unsupported(UNSUPPORTED[extension]);
  if (byMediaType) return withHints(byMediaType, 'content-type'); // text/plain with an unknown extension

  return withHints(sniffFormat(input.bytes), 'content');
}

function startsWith(bytes: Buffer, signature: string, offset = 0): boolean {
  return bytes.subarray(offset, offset + signature.length).toString('latin1') === signature;
}

const HTML_START = /^\s*(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i;
const HTML_TAG = /<(?:p|div|span|a|br|h[1-6]|ul|ol|li|table|tr|td|section|article|main|header|footer|title|meta|script)\b[^>]*>/gi;
const MARKDOWN_HINT = /^(?: {0,3}#{1,6}[ \t]+\S| {0,3}(?:```|~~~))/m;

function sniffFormat(bytes: Buffer): DocumentFormat {
  if (bytes.subarray(0, 1024).includes('%PDF-')) return 'pdf';
  if (startsWith(bytes, 'PK\x03\x04')) {
    if (bytes.includes('word/document.xml')) return 'docx';
    throw unsupported('ZIP archive');
  }
  if (startsWith(bytes, '\xd0\xcf\x11\xe0')) throw unsupported('Legacy Office or password-protected Office');
  if (looksBinary(bytes)) throw unsupported('Binary');

  const head = bytes.subarray(0, 64 * 1024).toString('utf8').replace(/^\ufeff/, '');
  const firstChar = head.trimStart()[0];
  if (firstChar === '{' || firstChar === '[') {
    try {
      JSON.parse(bytes.toString('utf8').replace(/^\ufeff/, ''));
      return 'json';
    } catch {
      // not JSON after all: plain text that starts with a brace
    }
  }
  if (HTML_START.test(head) || (firstChar === '<' && (head.match(HTML_TAG)?.length ?? 0) >= 2)) return 'html';
  if (MARKDOWN_HINT.test(head)) return 'markdown';
  return 'txt';
}
