import { htmlToMarkdown } from '@crs/ingestion/parsers/html-to-markdown';

/**
 * Plain text from a page body in Confluence's storage format (XHTML with `ac:` macros and `ri:` resource identifiers),
 * through the HTML converter ingestion uses (`#` headings that keep their text, `- ` lists, tables as columns).
 *
 * Before that, the Confluence elements become HTML that says the same:
 * - CDATA (the text of code blocks and plain-text macro bodies) becomes escaped text, which an HTML parser would
 *   otherwise drop as a comment; a plain-text macro body becomes a `<pre>` block.
 * - Macro parameters (`ac:parameter`: a macro's settings), task ids and states, and editor placeholders are dropped.
 * - A rich-text macro body, layout sections and cells, and task bodies become blocks, so their text stays apart.
 * - A link to a page with no link text of its own reads as the page's title; other resource identifiers (users
 *   mentioned, attachments, images, emoticons) carry no text and are dropped.
 * - A `<time datetime>` reads as its date.
 */
export function storageToText(storage: string): string {
  const html = storage
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, text: string) => escapeHtml(text))
    .replace(/<ac:parameter\b[^>]*\/>/gi, '')
    .replace(/<ac:parameter\b[^>]*>[\s\S]*?<\/ac:parameter>/gi, '')
    .replace(/<ac:plain-text-body\b[^>]*>/gi, '<pre>')
    .replace(/<\/ac:plain-text-body>/gi, '</pre>')
    .replace(/<ac:link\b[^>]*>\s*<ri:page\b[^>]*?ri:content-title="([^"]*)"[^>]*\/>\s*<\/ac:link>/gi, (_, title: string) => title)
    .replace(/<ri:[\w-]+\b[^>]*\/>/gi, '')
    .replace(/<ri:[\w-]+\b[^>]*>[\s\S]*?<\/ri:[\w-]+>/gi, '')
    .replace(/<ac:(?:image|emoticon)\b[^>]*\/>/gi, '')
    .replace(/<ac:image\b[^>]*>[\s\S]*?<\/ac:image>/gi, '')
    .replace(/<time\b[^>]*datetime="([^"]*)"[^>]*\/>/gi, (_, date: string) => date)
    .replace(/<(\/?)ac:(?:rich-text-body|layout|layout-section|layout-cell|task-list|structured-macro|macro)\b[^>]*>/gi, (_, close: string) => `<${close}div>`)
    .replace(/<(\/?)ac:task-body\b[^>]*>/gi, (_, close: string) => `<${close}p>`)
    .replace(/<ac:(task-id|task-status|placeholder)\b[^>]*>[\s\S]*?<\/ac:\1>/gi, '')
    .replace(/<\/?ac:task\b[^>]*>/gi, ' ');
  return htmlToMarkdown(html)
    .text.replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
