/**
 * A line-based reading of Markdown, enough for chunking: ATX and setext headings, fenced code,
 * GFM tables, YAML front matter, and prose between them. Offsets point into the original text.
 * (A full Markdown parser would only give us an AST to map back to offsets; this stays synchronous
 * and deterministic, and never reflows the source.)
 */
export type MarkdownBlockKind = 'prose' | 'code' | 'table' | 'front-matter';

export interface MarkdownBlock {
  kind: MarkdownBlockKind;
  start: number;
  end: number;
}

export interface MarkdownHeading {
  level: number;
  text: string;
}

export type MarkdownElement = ({ type: 'block' } & MarkdownBlock) | ({ type: 'heading' } & MarkdownHeading);

export interface MarkdownSection {
  /** Enclosing headings, outermost first; empty before the first heading. */
  headingPath: string[];
  blocks: MarkdownBlock[];
}

interface Line {
  start: number;
  end: number;
  text: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const TABLE_DELIMITER = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const LIST_ITEM = /^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/;
const BLANK = /^[ \t\r]*$/;
const FRONT_MATTER_MAX_LINES = 200;

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const lineEnd = end > start && text[end - 1] === '\r' ? end - 1 : end;
    lines.push({ start, end: lineEnd, text: text.slice(start, lineEnd) });
    start = end + 1;
  }
  return lines;
}

/** Heading text without closing hashes and inline emphasis or code marks. */
export function cleanHeadingText(raw: string): string {
  return raw
    .replace(/(?:^|[ \t]+)#+[ \t]*$/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`+|\*\*|__|\*/g, '')
    .trim();
}

export function scanMarkdown(text: string): MarkdownElement[] {
  const lines = splitLines(text);
  const elements: MarkdownElement[] = [];
  let proseFrom = -1;
  const flushProse = (lastLine: number) => {
    if (proseFrom >= 0 && lastLine >= proseFrom) {
      elements.push({ type: 'block', kind: 'prose', start: lines[proseFrom]!.start, end: lines[lastLine]!.end });
    }
    proseFrom = -1;
  };

  let i = 0;
  if (lines[0]?.text === '---') {
    const limit = Math.min(lines.length, FRONT_MATTER_MAX_LINES);
    for (let j = 1; j < limit; j++) {
      if (lines[j]!.text === '---' || lines[j]!.text === '...') {
        elements.push({ type: 'block', kind: 'front-matter', start: 0, end: lines[j]!.end });
        i = j + 1;
        break;
      }
    }
  }

  while (i < lines.length) {
    const line = lines[i]!;
    const next = lines[i + 1];
    const fence = FENCE_OPEN.exec(line.text);
    if (fence) {
      flushProse(i - 1);
      const marker = fence[1]!;
      let close = lines.length - 1; // an unclosed fence runs to the end, as in CommonMark
      for (let j = i + 1; j < lines.length; j++) {
        const closing = FENCE_CLOSE.exec(lines[j]!.text);
        if (closing && closing[1]![0] === marker[0] && closing[1]!.length >= marker.length) {
          close = j;
          break;
        }
      }
      elements.push({ type: 'block', kind: 'code', start: line.start, end: lines[close]!.end });
      i = close + 1;
      continue;
    }
    const atx = ATX_HEADING.exec(line.text);
    if (atx) {
      flushProse(i - 1);
      elements.push({ type: 'heading', level: atx[1]!.length, text: cleanHeadingText(atx[2] ?? '') });
      i++;
      continue;
    }
    if (BLANK.test(line.text)) {
      flushProse(i - 1);
      i++;
      continue;
    }
    if (proseFrom < 0 && next && SETEXT_UNDERLINE.test(next.text) && !LIST_ITEM.test(line.text) && !THEMATIC_BREAK.test(line.text)) {
      elements.push({ type: 'heading', level: next.text.trim().startsWith('=') ? 1 : 2, text: cleanHeadingText(line.text) });
      i += 2;
      continue;
    }
    if (THEMATIC_BREAK.test(line.text)) {
      flushProse(i - 1);
      i++;
      continue;
    }
    if (line.text.includes('|') && next && next.text.includes('|') && TABLE_DELIMITER.test(next.text)) {
      flushProse(i - 1);
      let last = i + 1;
      while (last + 1 < lines.length && lines[last + 1]!.text.includes('|') && !BLANK.test(lines[last + 1]!.text)) last++;
      elements.push({ type: 'block', kind: 'table', start: line.start, end: lines[last]!.end });
      i = last + 1;
      continue;
    }
    if (proseFrom < 0) proseFrom = i;
    i++;
  }
  flushProse(lines.length - 1);
  return elements;
}

/** Blocks grouped under their heading path; sections without blocks are left out. */
export function markdownSections(text: string): MarkdownSection[] {
  const sections: MarkdownSection[] = [];
  const stack: MarkdownHeading[] = [];
  let current: MarkdownSection = { headingPath: [], blocks: [] };
  for (const element of scanMarkdown(text)) {
    if (element.type === 'block') {
      current.blocks.push({ kind: element.kind, start: element.start, end: element.end });
      continue;
    }
    if (current.blocks.length > 0) sections.push(current);
    while (stack.length > 0 && stack[stack.length - 1]!.level >= element.level) stack.pop();
    stack.push({ level: element.level, text: element.text });
    current = { headingPath: stack.map((h) => h.text).filter((t) => t.length > 0), blocks: [] };
  }
  if (current.blocks.length > 0) sections.push(current);
  return sections;
}

/** The text of the first level-1 heading (outside code), or null. */
export function firstLevelOneHeading(text: string): string | null {
  for (const element of scanMarkdown(text)) {
    if (element.type === 'heading' && element.level === 1 && element.text) return element.text;
  }
  return null;
}
