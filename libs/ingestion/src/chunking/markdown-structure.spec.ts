import { firstLevelOneHeading, markdownSections, scanMarkdown } from './markdown-structure';

const sectionsOf = (text: string) =>
  markdownSections(text).map((s) => ({ path: s.headingPath, blocks: s.blocks.map((b) => [b.kind, text.slice(b.start, b.end)]) }));

describe('markdownSections', () => {
  it('nests headings into paths and pops them on a same or higher level', () => {
    const text = '# A\na\n## B\nb\n### C\nc\n## D\nd\n# E\ne';
    expect(sectionsOf(text).map((s) => s.path)).toEqual([['A'], ['A', 'B'], ['A', 'B', 'C'], ['A', 'D'], ['E']]);
  });

  it('skips levels without inventing headings', () => {
    expect(sectionsOf('# A\n### C\nc').map((s) => s.path)).toEqual([['A', 'C']]);
  });

  it('keeps text before the first heading with an empty path', () => {
    expect(sectionsOf('intro\n\n# A\na')).toEqual([
      { path: [], blocks: [['prose', 'intro']] },
      { path: ['A'], blocks: [['prose', 'a']] },
    ]);
  });

  it('does not read headings inside fenced code, and keeps the fence whole', () => {
    const text = '# A\n```sh\n# not a heading\necho hi\n```\nafter';
    expect(sectionsOf(text)).toEqual([
      {
        path: ['A'],
        blocks: [
          ['code', '```sh\n# not a heading\necho hi\n```'],
          ['prose', 'after'],
        ],
      },
    ]);
  });

  it('runs an unclosed fence to the end', () => {
    expect(sectionsOf('~~~\ncode\n# still code')).toEqual([{ path: [], blocks: [['code', '~~~\ncode\n# still code']] }]);
  });

  it('finds GFM tables, setext headings and front matter; skips thematic breaks', () => {
    const text = '---\ntitle: T\n---\nTitle\n=====\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\ntext\n\n***\n\nSub\n---\nmore';
    expect(sectionsOf(text)).toEqual([
      { path: [], blocks: [['front-matter', '---\ntitle: T\n---']] },
      {
        path: ['Title'],
        blocks: [
          ['table', '| a | b |\n|---|:-:|\n| 1 | 2 |'],
          ['prose', 'text'],
        ],
      },
      { path: ['Title', 'Sub'], blocks: [['prose', 'more']] },
    ]);
  });

  it('cleans heading text of closing hashes, emphasis, code marks and links', () => {
    const headings = scanMarkdown('## **Install** `crs` ##\n# [Docs](https://x.y) #').filter((e) => e.type === 'heading');
    expect(headings.map((h) => (h.type === 'heading' ? h.text : ''))).toEqual(['Install crs', 'Docs']);
  });
});

describe('firstLevelOneHeading', () => {
  it('returns the first level-1 heading outside code', () => {
    expect(firstLevelOneHeading('```\n# code\n```\n## Two\n# One\n# Other')).toBe('One');
    expect(firstLevelOneHeading('no headings')).toBeNull();
  });
});
