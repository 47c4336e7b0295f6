import { type Chunk, type ChunkTextOptions, resolveChunkOptions } from './chunk';
import { contextLine, withContext } from './context-line';
import { markdownSections } from './markdown-structure';
import { type Unit, appendUnits, packUnits } from './pack-units';
import { paragraphRanges, trimRange } from './text-ranges';

/**
 * Splits a document into chunks of at most `maxTokens` tokens (see countTokens), deterministically.
 *
 * Prose: paragraphs (blank-line separated) are kept whole when they fit a chunk; a longer one is cut
 * at sentence ends, an overlong sentence at line breaks, then between words. The pieces are packed
 * greedily in order, and each chunk after the first repeats the previous chunk's last sentences
 * (up to `overlapTokens`; trailing words when even one sentence is longer than that).
 *
 * Markdown: the same, per heading section. Each chunk's text starts with the section's context
 * line ("Title > Install > Linux"), counted in maxTokens; overlap never crosses sections. Fenced code,
 * tables and front matter stay whole when they fit a chunk, else are cut at line breaks.
 */
export function chunkText(text: string, options: ChunkTextOptions = {}): Chunk[] {
  const { maxTokens, overlapTokens, title } = resolveChunkOptions(options);
  if (!/\S/.test(text)) return [];

  if (!options.isMarkdown) {
    const context = contextLine(title, [], maxTokens);
    const budget = maxTokens - context.tokens;
    const units: Unit[] = [];
    for (const paragraph of paragraphRanges(text, 0, text.length)) appendUnits(text, paragraph, 'prose', budget, units);
    return packUnits(text, units, budget, overlapTokens).map((range, index) => ({
      index,
      text: withContext(context, text.slice(range.start, range.end)),
      startChar: range.start,
      endChar: range.end,
    }));
  }

  const chunks: Chunk[] = [];
  for (const section of markdownSections(text)) {
    const context = contextLine(title, section.headingPath, maxTokens);
    const budget = maxTokens - context.tokens;
    const units: Unit[] = [];
    for (const block of section.blocks) {
      if (block.kind === 'prose') {
        for (const paragraph of paragraphRanges(text, block.start, block.end)) appendUnits(text, paragraph, 'prose', budget, units);
        continue;
      }
      const range = trimRange(text, block.start, block.end);
      if (range) appendUnits(text, range, 'verbatim', budget, units);
    }
    for (const range of packUnits(text, units, budget, overlapTokens)) {
      chunks.push({
        index: chunks.length,
        text: withContext(context, text.slice(range.start, range.end)),
        startChar: range.start,
        endChar: range.end,
        headingPath: [...section.headingPath],
      });
    }
  }
  // Nothing but headings: chunk the heading lines themselves as prose.
  return chunks.length > 0 ? chunks : chunkText(text, { ...options, isMarkdown: false });
}
