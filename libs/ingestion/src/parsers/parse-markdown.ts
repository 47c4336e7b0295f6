import { firstLevelOneHeading, scanMarkdown } from '../chunking/markdown-structure';

const FRONT_MATTER_TITLE = /^title:[ \t]*(.+?)[ \t]*$/m;

/** The front matter's `title:`, else the first level-1 heading, else null. */
export function markdownTitle(text: string): string | null {
  const first = scanMarkdown(text)[0];
  if (first?.type === 'block' && first.kind === 'front-matter') {
    const title = FRONT_MATTER_TITLE.exec(text.slice(first.start, first.end))?.[1]?.replace(/^(["'])(.*)\1$/, '$2').trim();
    if (title) return title;
  }
  return firstLevelOneHeading(text);
}
