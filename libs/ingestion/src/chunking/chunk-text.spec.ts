import fc from 'fast-check';
import type { Chunk } from './chunk';
import { chunkText } from './chunk-text';
import { countTokens } from './token-count';

const isBoundary = (text: string, at: number) => at <= 0 || at >= text.length || /\s/.test(text[at - 1]!) || /\s/.test(text[at]!);

/** Every chunk is a slice of the source that starts and ends between words. */
function expectWholeWords(source: string, chunks: Chunk[]): void {
  for (const chunk of chunks) {
    expect(chunk.text).toBe(source.slice(chunk.startChar, chunk.endChar));
    expect(isBoundary(source, chunk.startChar) && isBoundary(source, chunk.endChar)).toBe(true);
  }
}

/** Every word of the source lies inside at least one chunk. */
function expectCoverage(source: string, chunks: Chunk[]): void {
  for (const word of source.matchAll(/\S+/g)) {
    const start = word.index;
    const end = start + word[0].length;
    expect(chunks.some((c) => c.startChar <= start && end <= c.endChar)).toBe(true);
  }
}

const sentence = (i: number) => `Sentence ${i} explains how the retrieval service stores context for topic ${i % 7}.`;
const paragraph = (from: number, count: number) => Array.from({ length: count }, (_, i) => sentence(from + i)).join(' ');

describe('chunkText (prose)', () => {
  it('returns no chunks for empty or blank input', () => {
    expect(chunkText('')).toEqual([]);
    expect(chunkText(' \n\n\t ')).toEqual([]);
    expect(chunkText('  \n', { isMarkdown: true })).toEqual([]);
  });

  it('returns a short text as one chunk with its offsets', () => {
    const text = '\n  Just one line.  \n';
    expect(chunkText(text)).toEqual([{ index: 0, text: 'Just one line.', startChar: 3, endChar: 17 }]);
  });

  it('keeps every chunk within maxTokens and numbers them in order', () => {
    const text = [paragraph(0, 40), paragraph(40, 3), paragraph(43, 25)].join('\n\n');
    for (const maxTokens of [16, 64, 256]) {
      const chunks = chunkText(text, { maxTokens });
      expect(chunks.length).toBeGreaterThan(1);
      chunks.forEach((chunk, i) => {
        expect(chunk.index).toBe(i);
        expect(countTokens(chunk.text)).toBeLessThanOrEqual(maxTokens);
      });
      expectWholeWords(text, chunks);
      expectCoverage(text, chunks);
    }
  });

  it('packs whole sentences and repeats the last sentence of a chunk at the start of the next', () => {
    const text = paragraph(0, 30); // each sentence is 13 tokens
    const chunks = chunkText(text, { maxTokens: 64, overlapTokens: 20 });
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!;
      const current = chunks[i]!;
      expect(current.startChar).toBeLessThan(previous.endChar);
      const overlap = text.slice(current.startChar, previous.endChar);
      expect(overlap).toMatch(/^Sentence \d+ .*\.$/);
      expect(countTokens(overlap)).toBeLessThanOrEqual(20);
      expect(current.text.startsWith(overlap)).toBe(true);
    }
    for (const chunk of chunks) expect(chunk.text).toMatch(/^Sentence \d+ [^]*\.$/);
  });

  it('falls back to trailing words for the overlap when the last sentence is longer than overlapTokens', () => {
    const chunks = chunkText(paragraph(0, 12), { maxTokens: 64, overlapTokens: 8 });
    const [first, second] = chunks;
    const overlap = first!.text.slice(second!.startChar - first!.startChar);
    expect(overlap.length).toBeGreaterThan(0);
    expect(countTokens(overlap)).toBeLessThanOrEqual(8);
    expect(second!.text.startsWith(overlap)).toBe(true);
  });

  it('has no overlap when overlapTokens is 0', () => {
    const chunks = chunkText(paragraph(0, 30), { maxTokens: 64, overlapTokens: 0 });
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.startChar).toBeGreaterThanOrEqual(chunks[i - 1]!.endChar);
  });

  it('keeps a paragraph that fits whole instead of filling the chunk with its first sentences', () => {
    const text = `${paragraph(0, 2)}\n\n${paragraph(2, 3)}`; // 32 + 48 tokens
    const chunks = chunkText(text, { maxTokens: 64, overlapTokens: 0 });
    expect(chunks.map((c) => c.text)).toEqual([paragraph(0, 2), paragraph(2, 3)]);
  });

  it('splits an overlong sentence between words', () => {
    const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkText(words, { maxTokens: 50, overlapTokens: 5 });
    expect(chunks.length).toBeGreaterThan(6);
    for (const chunk of chunks) expect(countTokens(chunk.text)).toBeLessThanOrEqual(50);
    expectWholeWords(words, chunks);
    expectCoverage(words, chunks);
  });

  it('cuts inside a word only when one word alone is larger than a chunk', () => {
    const blob = 'x'.repeat(5000);
    const text = `before ${blob} after`;
    const chunks = chunkText(text, { maxTokens: 64, overlapTokens: 0 });
    for (const chunk of chunks) expect(countTokens(chunk.text)).toBeLessThanOrEqual(64);
    expect(chunks.map((c) => c.text).join('').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));
  });

  it('prefixes the title as a context line, counted in maxTokens', () => {
    const chunks = chunkText(paragraph(0, 10), { maxTokens: 64, title: 'Service Guide' });
    for (const chunk of chunks) {
      expect(chunk.text).toBe(`Service Guide\n${paragraph(0, 10).slice(chunk.startChar, chunk.endChar)}`);
      expect(countTokens(chunk.text)).toBeLessThanOrEqual(64);
      expect(chunk.headingPath).toBeUndefined();
    }
  });

  it('is deterministic', () => {
    const text = [paragraph(0, 50), '# Not markdown here', paragraph(50, 20)].join('\n\n');
    expect(chunkText(text, { maxTokens: 100 })).toEqual(chunkText(`${text}`, { maxTokens: 100 }));
  });

  it('rejects sizes that cannot make progress', () => {
    expect(() => chunkText('x', { maxTokens: 8 })).toThrow(RangeError);
    expect(() => chunkText('x', { maxTokens: 64, overlapTokens: 32 })).toThrow(RangeError);
    expect(() => chunkText('x', { maxTokens: 64, overlapTokens: -1 })).toThrow(RangeError);
    expect(() => chunkText('x', { maxTokens: 64.5 })).toThrow(RangeError);
  });

  it('holds its invariants on arbitrary text', () => {
    const word = fc.stringMatching(/^[A-Za-z0-9'-]{1,12}$/);
    const separator = fc.constantFrom(' ', ' ', ' ', '. ', '? ', ', ', '\n', '\n\n', '\n- ', ' e.g. ');
    const text = fc.array(fc.tuple(word, separator), { maxLength: 400 }).map((parts) => parts.map(([w, s]) => w + s).join(''));
    fc.assert(
      fc.property(text, fc.integer({ min: 16, max: 128 }), fc.integer({ min: 0, max: 7 }), (source, maxTokens, overlap) => {
        const options = { maxTokens, overlapTokens: Math.floor((maxTokens * overlap) / 16) };
        const chunks = chunkText(source, options);
        for (const chunk of chunks) expect(countTokens(chunk.text)).toBeLessThanOrEqual(maxTokens);
        expectWholeWords(source, chunks);
        expectCoverage(source, chunks);
        for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.startChar).toBeGreaterThan(chunks[i - 1]!.startChar);
        expect(chunkText(source, options)).toEqual(chunks);
      }),
      { numRuns: 200, seed: 20240601 },
    );
  });

  // How fast is measured by bench:speed (the ingest steps), not asserted here.
  it('chunks 1 MB of text', () => {
    const paragraphs: string[] = [];
    let size = 0;
    for (let i = 0; size < 1_000_000; i++) {
      const p = paragraph(i * 10, 1 + (i % 9));
      paragraphs.push(p);
      size += p.length + 2;
    }
    const text = paragraphs.join('\n\n');
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(500);
    // nothing lost: every paragraph's first words are in some chunk
    const joined = chunks.map((c) => c.text).join(' ');
    for (const p of paragraphs.filter((_, i) => i % 97 === 0)) expect(joined).toContain(p.split(' ').slice(0, 6).join(' '));
  });
});

describe('chunkText (markdown)', () => {
  const doc = [
    '# Guide',
    '',
    'Welcome to the guide.',
    '',
    '## Install',
    '',
    '### Linux',
    '',
    'Run the installer:',
    '',
    '```bash',
    './install.sh --prefix /opt/crs',
    '# configure',
    'crs init',
    '```',
    '',
    '| OS | Supported |',
    '| -- | --------- |',
    '| Ubuntu | yes |',
    '',
    '### macOS',
    '',
    'Use Homebrew.',
  ].join('\n');

  it('records the heading path and leads each chunk with it', () => {
    const chunks = chunkText(doc, { isMarkdown: true });
    expect(chunks.map((c) => c.headingPath)).toEqual([['Guide'], ['Guide', 'Install', 'Linux'], ['Guide', 'Install', 'macOS']]);
    expect(chunks[0]!.text).toBe('Guide\nWelcome to the guide.');
    expect(chunks[2]!.text).toBe('Guide > Install > macOS\nUse Homebrew.');
    for (const chunk of chunks) {
      expect(chunk.text.endsWith(doc.slice(chunk.startChar, chunk.endChar))).toBe(true);
    }
  });

  it('keeps code blocks and tables whole when they fit', () => {
    const linux = chunkText(doc, { isMarkdown: true })[1]!;
    expect(linux.text).toContain('```bash\n./install.sh --prefix /opt/crs\n# configure\ncrs init\n```');
    expect(linux.text).toContain('| OS | Supported |\n| -- | --------- |\n| Ubuntu | yes |');
  });

  it('starts a new chunk rather than splitting a code block that fits one', () => {
    const code = ['```js', ...Array.from({ length: 8 }, (_, i) => `const value${i} = compute(${i});`), '```'].join('\n');
    const text = `# Code\n\n${paragraph(0, 3)}\n\n${code}`;
    const chunks = chunkText(text, { isMarkdown: true, maxTokens: 100, overlapTokens: 0 });
    expect(chunks.filter((c) => c.text.includes(code))).toHaveLength(1);
  });

  it('splits a code block larger than a chunk at line breaks', () => {
    const lines = Array.from({ length: 60 }, (_, i) => `let v${i} = f(${i});`);
    const text = ['```', ...lines, '```'].join('\n');
    const chunks = chunkText(text, { isMarkdown: true, maxTokens: 64, overlapTokens: 0 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(countTokens(chunk.text)).toBeLessThanOrEqual(64);
      for (const line of chunk.text.split('\n')) expect(['```', ...lines]).toContain(line);
    }
  });

  it('does not carry overlap across sections', () => {
    const text = `# A\n\n${paragraph(0, 10)}\n\n# B\n\n${paragraph(10, 10)}`;
    const chunks = chunkText(text, { isMarkdown: true, maxTokens: 64 });
    const firstOfB = chunks.find((c) => c.headingPath![0] === 'B')!;
    expect(firstOfB.text.startsWith(`B\n${sentence(10)} `)).toBe(true);
  });

  it('puts the title before the heading path unless the top heading repeats it', () => {
    expect(chunkText('# Intro\nHello.', { isMarkdown: true, title: 'Handbook' })[0]!.text).toBe('Handbook > Intro\nHello.');
    expect(chunkText('# Handbook\nHello.', { isMarkdown: true, title: 'handbook' })[0]!.text).toBe('Handbook\nHello.');
    expect(chunkText('Hello.', { isMarkdown: true, title: 'Handbook' })[0]).toMatchObject({ text: 'Handbook\nHello.', headingPath: [] });
  });

  it('caps a very long heading path at a quarter of maxTokens, keeping the innermost headings', () => {
    const text = `# ${'Very long outer heading '.repeat(5)}\n## Inner\n\nBody text.`;
    const [chunk] = chunkText(text, { isMarkdown: true, maxTokens: 32 });
    expect(chunk!.text).toBe('Inner\nBody text.');
    expect(chunk!.headingPath).toEqual(['Very long outer heading Very long outer heading Very long outer heading Very long outer heading Very long outer heading', 'Inner']);
  });

  it('chunks a document of headings only as prose', () => {
    expect(chunkText('# Title\n## Subtitle', { isMarkdown: true })).toEqual([{ index: 0, text: '# Title\n## Subtitle', startChar: 0, endChar: 19 }]);
  });

  it('keeps chunks within maxTokens including the context line', () => {
    const text = Array.from({ length: 20 }, (_, i) => `## Section ${i}\n\n${paragraph(i * 5, 5)}`).join('\n\n');
    for (const chunk of chunkText(text, { isMarkdown: true, maxTokens: 48, title: 'Manual' })) {
      expect(countTokens(chunk.text)).toBeLessThanOrEqual(48);
      expect(chunk.text.startsWith(`Manual > ${chunk.headingPath![0]}\n`)).toBe(true);
    }
  });

  it('chunks 1 MB of markdown deterministically', () => {
    const sections: string[] = [];
    let size = 0;
    for (let i = 0; size < 1_000_000; i++) {
      const section = `${'#'.repeat(1 + (i % 3))} Part ${i}\n\n${paragraph(i, 4)}\n\n\`\`\`\ncode ${i}\n\`\`\`\n\n${paragraph(i + 4, 6)}`;
      sections.push(section);
      size += section.length + 2;
    }
    const text = sections.join('\n\n');
    const chunks = chunkText(text, { isMarkdown: true });
    expect(chunks.length).toBeGreaterThan(500);
    expect(chunkText(text, { isMarkdown: true })).toEqual(chunks);
  });
});
