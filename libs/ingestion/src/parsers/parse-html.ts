import { firstLevelOneHeading } from '../chunking/markdown-structure';
import { htmlToMarkdown } from './html-to-markdown';

export interface HtmlDocument {
  text: string;
  title: string | null;
}

/** Scripts, styles and images dropped; headings as `#` lines; title from <title>, else the first <h1>. */
export function parseHtml(html: string): HtmlDocument {
  const { text, title } = htmlToMarkdown(html);
  return { text, title: title ?? firstLevelOneHeading(text) };
}

const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i;

/** The charset an HTML document declares in a <meta> tag (looked for in its first 4 KB). */
export function declaredHtmlCharset(bytes: Buffer): string | null {
  return META_CHARSET.exec(bytes.subarray(0, 4096).toString('latin1'))?.[1]?.toLowerCase() ?? null;
}
