import { type DetectedFormat, detectFormat } from './detect-format';
import { normalizeText } from './normalize-text';
import { parseCsv } from './parse-csv';
import { parseDocx } from './parse-docx';
import { ParseError } from './parse-error';
import { declaredHtmlCharset, parseHtml } from './parse-html';
import { parseJson } from './parse-json';
import { markdownTitle } from './parse-markdown';
import { parsePdf } from './parse-pdf';
import type { ParseInput, ParsedDocument } from './parsed-document';
import type { PdfExtractionOptions } from './pdf-text-extraction';
import { FORMAT_NAMES, decodeText } from './text-decoding';

export type ParseOptions = PdfExtractionOptions;

interface Extracted {
  text: string;
  title: string | null;
  pages?: number;
}

/**
 * Reads an uploaded file into normalized text. Throws ParseError only (UNSUPPORTED_FORMAT,
 * CORRUPT_FILE, EMPTY_DOCUMENT, ENCRYPTED_PDF); whatever a parsing library threw is its `cause`.
 */
export async function parseDocument(input: ParseInput, options: ParseOptions = {}): Promise<ParsedDocument> {
  if (input.bytes.length === 0) throw new ParseError('EMPTY_DOCUMENT', 'The file is empty.');
  const detected = detectFormat(input);
  const { format } = detected;
  let extracted: Extracted;
  try {
    extracted = await extract(detected, input.bytes, options);
  } catch (error) {
    if (error instanceof ParseError) throw error;
    // PDF extraction already maps everything about the file; what is left is our worker failing.
    if (format === 'pdf') throw error;
    throw new ParseError('CORRUPT_FILE', `The ${FORMAT_NAMES[format]} file could not be read.`, { format, cause: error });
  }
  const text = normalizeText(extracted.text);
  if (text === '') throw new ParseError('EMPTY_DOCUMENT', `The ${FORMAT_NAMES[format]} file holds no text.`, { format });
  const title = extracted.title ? normalizeText(extracted.title).replace(/\s+/g, ' ') || null : null;
  return {
    text,
    isMarkdown: format === 'markdown' || format === 'html' || format === 'docx',
    title,
    format,
    ...(extracted.pages === undefined ? {} : { pages: extracted.pages }),
  };
}

async function extract(detected: DetectedFormat, bytes: Buffer, options: ParseOptions): Promise<Extracted> {
  const { format, charset, tabSeparated, jsonLines } = detected;
  switch (format) {
    case 'txt':
      return { text: decodeText(bytes, format, charset), title: null };
    case 'markdown': {
      const text = decodeText(bytes, format, charset);
      return { text, title: markdownTitle(text) };
    }
    case 'html':
      return parseHtml(decodeText(bytes, format, charset ?? declaredHtmlCharset(bytes)));
    case 'pdf':
      return parsePdf(bytes, options);
    case 'docx':
      return parseDocx(bytes);
    case 'csv':
      return { text: parseCsv(decodeText(bytes, format, charset), { tabSeparated }), title: null };
    case 'json':
      return { text: parseJson(decodeText(bytes, format, charset), { jsonLines }), title: null };
    default: {
      const unknown: never = format;
      throw new ParseError('UNSUPPORTED_FORMAT', `Unsupported format ${String(unknown)}.`);
    }
  }
}
