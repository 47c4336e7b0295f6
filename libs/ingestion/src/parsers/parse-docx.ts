import { inflateRawSync } from 'node:zlib';
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
  // The sizes an archive declares may be false: what its parts really inflate to is bounded too, before mammoth
  // (JSZip) inflates them whole and only then compares with the declared size.
  if (!zipInflatesWithin(bytes, DOCX_MAX_UNZIPPED_BYTES)) {
    throw new ParseError('CONTENT_TOO_LARGE', `The DOCX document unzips to more than the ${DOCX_MAX_UNZIPPED_BYTES / 1024 / 1024} MiB read (more than its archive declares).`, { format: 'docx' });
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

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** Where a zip's end-of-central-directory record starts (searched back over the longest comment), or -1. */
function endOfCentralDirectory(zip: Buffer): number {
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) if (zip.readUInt32LE(i) === EOCD) return i;
  return -1;
}

/**
 * The sum of the uncompressed sizes a zip's central directory declares, read before anything is inflated; Infinity for
 * ZIP64 entries (sizes past 4 GiB); 0 when no directory is found (mammoth then reports the file as damaged). A cheap
 * first check for an honest archive; zipInflatesWithin catches one that declares false sizes.
 */
export function zipUncompressedBytes(zip: Buffer): number {
  const eocd = endOfCentralDirectory(zip);
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

/**
 * Whether the entries of a zip's central directory inflate to at most `limit` bytes together, found by inflating each
 * (deflate or stored, as JSZip reads them) with an output bound, so a lying archive costs at most `limit` bytes here.
 * An entry that is damaged or of another method stops the check (true): mammoth then reports the file as damaged.
 */
export function zipInflatesWithin(zip: Buffer, limit: number): boolean {
  const eocd = endOfCentralDirectory(zip);
  if (eocd < 0) return true;
  const entries = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  let total = 0;
  for (let n = 0; n < entries; n++) {
    if (offset + 46 > zip.length || zip.readUInt32LE(offset) !== CENTRAL) return true;
    const method = zip.readUInt16LE(offset + 10);
    const compressed = zip.readUInt32LE(offset + 20);
    const local = zip.readUInt32LE(offset + 42);
    offset += 46 + zip.readUInt16LE(offset + 28) + zip.readUInt16LE(offset + 30) + zip.readUInt16LE(offset + 32);
    if (local + 30 > zip.length || zip.readUInt32LE(local) !== LOCAL) return true;
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, Math.min(zip.length, start + compressed));
    if (method === 0) total += data.length;
    else if (method === 8) {
      try {
        total += inflateRawSync(data, { maxOutputLength: limit - total + 1 }).length;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return false;
        return true; // damaged
      }
    } else return true;
    if (total > limit) return false;
  }
  return true;
}
