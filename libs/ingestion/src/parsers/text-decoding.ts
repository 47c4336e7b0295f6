import { TextDecoder } from 'node:util';
import { ParseError } from './parse-error';
import type { DocumentFormat } from './parsed-document';

/** Bytes examined by the binary check, as git does. */
const BINARY_SNIFF_BYTES = 8000;

/** Git's rule: a NUL byte near the start means binary, not text. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

function decoderFor(label: string | null | undefined): TextDecoder | null {
  if (!label) return null;
  try {
    return new TextDecoder(label, { fatal: true });
  } catch {
    return null; // unknown charset label
  }
}

const utf8 = () => new TextDecoder('utf-8', { fatal: true });

/**
 * Bytes to text: a byte-order mark wins (UTF-8, UTF-16 LE/BE), then a declared charset, then
 * UTF-8. Binary content and byte sequences invalid in the chosen encoding are CORRUPT_FILE.
 */
export function decodeText(bytes: Uint8Array, format: DocumentFormat, declaredCharset?: string | null): string {
  let decoder: TextDecoder;
  let body = bytes;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    decoder = utf8();
    body = bytes.subarray(3);
  } else if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    decoder = new TextDecoder('utf-16le', { fatal: true });
    body = bytes.subarray(2);
  } else if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    decoder = new TextDecoder('utf-16be', { fatal: true });
    body = bytes.subarray(2);
  } else {
    if (looksBinary(bytes)) {
      throw new ParseError('CORRUPT_FILE', `The file holds binary data, not ${FORMAT_NAMES[format]} text.`, { format });
    }
    decoder = decoderFor(declaredCharset) ?? utf8();
  }
  try {
    return decoder.decode(body);
  } catch (cause) {
    throw new ParseError(
      'CORRUPT_FILE',
      `The file is not valid ${decoder.encoding.toUpperCase()} text; save it as UTF-8 and upload it again.`,
      { format, cause },
    );
  }
}

export const FORMAT_NAMES: Record<DocumentFormat, string> = {
  txt: 'plain',
  markdown: 'Markdown',
  html: 'HTML',
  pdf: 'PDF',
  docx: 'DOCX',
  csv: 'CSV',
  json: 'JSON',
};
