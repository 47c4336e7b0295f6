import JSZip from 'jszip';
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
export async function parseDocx(bytes: Buffer, maxUnzippedBytes = DOCX_MAX_UNZIPPED_BYTES): Promise<DocxDocument> {
  if (bytes.subarray(0, 4).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0]))) {
    throw new ParseError('UNSUPPORTED_FORMAT', 'This is a password-protected Word document or a legacy .doc file; neither is supported.', {
      format: 'docx',
    });
  }
  const limitMiB = Math.round(maxUnzippedBytes / 1024 / 1024);
  const unzipped = zipUncompressedBytes(bytes);
  if (unzipped > maxUnzippedBytes) {
    throw new ParseError('CONTENT_TOO_LARGE', `The DOCX document unzips to ${unzipped === Infinity ? 'more than 4 GiB' : `${Math.round(unzipped / 1024 / 1024)} MiB`}, more than the ${limitMiB} MiB read.`, { format: 'docx' });
  }
  // The sizes an archive declares may be false: what its parts really inflate to is bounded too, before mammoth
  // (JSZip) inflates them whole and only then compares with the declared size.
  if (!(await zipInflatesWithin(bytes, maxUnzippedBytes))) {
    throw new ParseError('CONTENT_TOO_LARGE', `The DOCX document unzips to more than the ${limitMiB} MiB read (more than its archive declares).`, { format: 'docx' });
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

/** Where a zip's end-of-central-directory record starts (searched back over the longest comment), or -1. */
function endOfCentralDirectory(zip: Buffer): number {
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) if (zip.readUInt32LE(i) === EOCD) return i;
  return -1;
}

/**
 * The sum of the uncompressed sizes a zip's central directory declares, read before anything is inflated; Infinity for
 * ZIP64 entries (sizes past 4 GiB); 0 when no directory is found. A cheap first check that refuses an honest archive
 * without inflating anything; zipInflatesWithin catches the others.
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
 * Whether a zip's parts inflate to at most `limit` bytes together, found by inflating them as a stream with the reader
 * mammoth itself uses (JSZip: the same view of an archive with prepended bytes, a long comment, a miscounted or ZIP64
 * directory), stopping at the first byte past the limit. Loading reads only the directory; an archive JSZip cannot
 * read passes here, and mammoth then reports it as damaged.
 */
export async function zipInflatesWithin(bytes: Buffer, limit: number): Promise<boolean> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes);
  } catch {
    return true;
  }
  let total = 0;
  for (const file of Object.values(zip.files)) {
    if (file.dir) continue;
    const within = await new Promise<boolean>((resolve) => {
      // JSZip's own chunked reader (its typings leave it out; nodeStream wraps it with a Node stream's buffering).
      const stream = (file as unknown as { internalStream(type: 'uint8array'): JSZipStream }).internalStream('uint8array');
      stream
        .on('data', (chunk: Uint8Array) => {
          total += chunk.length;
          if (total > limit) {
            stream.pause();
            resolve(false);
          }
        })
        .on('error', () => resolve(true)) // a damaged part: mammoth says so
        .on('end', () => resolve(true))
        .resume();
    });
    if (!within) return false;
  }
  return true;
}

interface JSZipStream {
  on(event: 'data', listener: (chunk: Uint8Array) => void): JSZipStream;
  on(event: 'error', listener: (error: unknown) => void): JSZipStream;
  on(event: 'end', listener: () => void): JSZipStream;
  pause(): JSZipStream;
  resume(): JSZipStream;
}
