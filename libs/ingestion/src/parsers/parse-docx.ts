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
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: bytes }, { styleMap: STYLE_MAP, convertImage: dropImages, ignoreEmptyParagraphs: true })).value;
  } catch (cause) {
    throw new ParseError('CORRUPT_FILE', 'The file is not a readable DOCX document (damaged, or not a Word file).', { format: 'docx', cause });
  }
  const { text } = htmlToMarkdown(html);
  return { text, title: firstLevelOneHeading(text) };
}
