import mammoth from 'mammoth';
import { firstLevelOneHeading } from '../chunking/markdown-structure';
import { htmlToMarkdown } from './html-to-markdown';
import { ParseError } from './parse-error';

export interface DocxDocument {
  text: string;
  title: string | null;
}

const STYLE_MAP = ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => h2:fresh"];
const dropImages = mammoth.images.imgElement(async () => ({ src: '' }));

/** DOCX → HTML (mammoth, headings from Word styles) → Markdown-ish text, like an HTML upload. */
export async function parseDocx(bytes: Buffer): Promise<DocxDocument> {
  if (bytes.subarray(0, 4).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0]))) {
    throw new ParseError('UNSUPPORTED_FORMAT', 'This is a password-protected Word document or a legacy .doc file; neither is supported.', {
      format: 'docx',
    });
  }
  const unzipped = zipUncompressedBytes(bytes);
  if (unzipped > DOCX_MAX_UNZIPPED_BYTES) {
    throw new ParseError('CONTENT_TOO_LARGE', `The DOCX document unzips to ${unzipped === Infinity ? 'more than 4 GiB' : `${Math.round(unzipped / 1024 / 1024)} MiB`}, more than the ${DOCX_MAX_UNZIPPED_BYTES / 1024 / 1024} MiB read.`, { format: 'docx' });
  }
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: bytes }, { styleMap: STYLE_MAP, convertImage: dropImages, ignoreEmptyParagraphs: true })).value;
  } catch (cause) {
    throw new ParseError('CORRUPT_FILE', 'The file is not a readable DOCX document (damaged, or not a Word file).', { format: 'docx', cause });
  }
  const { text } = htmlToMarkdown(html);
  return { text, title: firstLevelOneHeading(text) };
}

/**
 * The most a DOCX may unzip to. The file itself is at most 50 MiB, but its XML compresses about 400:1: a 483 KB
 * document of 200 MB text took the process to 2.3 GB while mammoth read it whole. 100 MiB holds any real document.
 */
export const DOCX_MAX_UNZIPPED_BYTES = 100 * 1024 * 1024;

/**
 * The sum of the uncompressed sizes a zip's central directory declares, read before anything is inflated; Infinity for
 * ZIP64 entries (sizes past 4 GiB); 0 when no directory is found (mammoth then reports the file as damaged). This bounds
 * an honest archive, like the one that found the problem; one that declares false sizes is not caught (known gap).
 */
export function zipUncompressedBytes(zip: Buffer): number {
  const EOCD = 0x06054b50;
  const CENTRAL = 0x02014b50;
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return 0;
  const entries = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  let total = 0;
  for (let n = 0; n < entries; n++) {
    if (offset + 46 > zip.length || zip.readUInt32LE(offset) !== CENTRAL) return total;
    const size = zip.readUInt32LE(offset + 24);
    if (size === 0xffffffff) return Infinity;
    total += size;
    offset += 46 + zip.readUInt16LE(offset + 28) + zip.readUInt16LE(offset + 30) + zip.readUInt16LE(offset + 32);
  }
  return total;
}
