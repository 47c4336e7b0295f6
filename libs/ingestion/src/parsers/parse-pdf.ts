import { ParseError } from './parse-error';
import { type PdfExtractionOptions, extractPdfText } from './pdf-text-extraction';

export interface PdfDocument {
  text: string;
  title: string | null;
  pages: number;
}

/** Pages separated by a blank line; words hyphenated across a line break are joined again. */
export async function parsePdf(bytes: Buffer, options?: PdfExtractionOptions): Promise<PdfDocument> {
  const { pages, title } = await extractPdfText(bytes, options);
  const text = pages.map((page) => page.replace(/(\p{L})-\n(\p{Ll})/gu, '$1$2')).join('\n\n');
  if (!/\S/.test(text)) {
    throw new ParseError('EMPTY_DOCUMENT', 'The PDF has no text layer (a scan?); text in images is not read.', { format: 'pdf' });
  }
  return { text, title: title?.trim() || null, pages: pages.length };
}
