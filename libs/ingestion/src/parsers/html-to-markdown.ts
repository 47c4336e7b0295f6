import { type FormatCallback, type HtmlToTextOptions, compile } from 'html-to-text';

/** `#` to `######` heading lines, so the chunker can follow the document's sections. */
const heading =
  (level: number): FormatCallback =>
  (elem, walk, builder) => {
    builder.openBlock({ leadingLineBreaks: 2 });
    builder.addLiteral(`${'#'.repeat(level)} `);
    walk(elem.children, builder);
    builder.closeBlock({ trailingLineBreaks: 2 });
  };

/** Preformatted text as a fenced block, so the chunker keeps it whole where it fits. */
const fencedCode: FormatCallback = (elem, walk, builder) => {
  builder.openBlock({ isPre: true, leadingLineBreaks: 2 });
  builder.addLiteral('```\n');
  walk(elem.children, builder);
  builder.addLiteral('\n```');
  builder.closeBlock({ trailingLineBreaks: 2 });
};

const options: HtmlToTextOptions = {
  wordwrap: false,
  formatters: {
    h1: heading(1),
    h2: heading(2),
    h3: heading(3),
    h4: heading(4),
    h5: heading(5),
    h6: heading(6),
    fencedCode,
  },
  selectors: [
    { selector: 'h1', format: 'h1' },
    { selector: 'h2', format: 'h2' },
    { selector: 'h3', format: 'h3' },
    { selector: 'h4', format: 'h4' },
    { selector: 'h5', format: 'h5' },
    { selector: 'h6', format: 'h6' },
    { selector: 'pre', format: 'fencedCode' },
    // Link text is content; the URLs are noise for retrieval.
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
    { selector: 'noscript', format: 'skip' },
    { selector: 'template', format: 'skip' },
    { selector: 'svg', format: 'skip' },
    { selector: 'hr', format: 'skip' },
    { selector: 'ul', options: { itemPrefix: '- ' } },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
  ],
};

const convertHtml = compile(options);
const convertInline = compile({ wordwrap: false, selectors: [{ selector: 'a', options: { ignoreHref: true } }] });

export interface HtmlText {
  /** Markdown-ish text: `#` headings, `- ` lists, fenced <pre>, tables as aligned columns. */
  text: string;
  /** <title>, else null. */
  title: string | null;
}

const TITLE = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i;

export function htmlToMarkdown(html: string): HtmlText {
  const titleHtml = TITLE.exec(html)?.[1];
  const title = titleHtml ? convertInline(titleHtml).replace(/\s+/g, ' ').trim() || null : null;
  return { text: convertHtml(html), title };
}
