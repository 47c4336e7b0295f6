import { chunkPairs, chunkText, parseDocument, ParseError, type Chunk } from '@crs/ingestion';
import type { BlobStore } from '@crs/persistence/blob-store';
import { mapLimit } from '@crs/persistence/map-limit';
import type { StatusRecorder } from './status';
import { active, IO_CONCURRENCY, PipelineFailure, type PipelineItem, type Work } from './work';

/** Loads each item's content, parses it (files) and splits it into chunks; a parse error fails the item with its code. */
export class Chunker {
  constructor(
    private readonly blobs: BlobStore,
    private readonly status: StatusRecorder,
    private readonly chunkTokens: number,
  ) {}

  async chunkAll(work: Work[]): Promise<void> {
    await mapLimit(active(work), IO_CONCURRENCY, async (w) => {
      try {
        const { chunks, format, parsedBytes } = await this.chunk(w.item);
        w.chunks = chunks.map((c) => ({ index: c.index, text: c.text, startChar: c.startChar, endChar: c.endChar, ...(c.headingPath ? { headingPath: c.headingPath } : {}) }));
        w.format = format;
        w.parsedBytes = parsedBytes;
      } catch (err) {
        if (err instanceof ParseError) w.failure = new PipelineFailure(err.code, err.message);
        else this.status.unexpected(w, err);
      }
    });
  }

  private async chunk(item: PipelineItem): Promise<{ chunks: Chunk[]; format: string; parsedBytes: number }> {
    const bytes = await this.blobs.get(item.database_id, item.content_sha256);
    const opts = { maxTokens: this.chunkTokens, title: item.title };
    if (item.pairs) {
      const pairs = JSON.parse(bytes.toString('utf8'));
      return { chunks: chunkPairs(pairs, opts), format: 'pairs', parsedBytes: bytes.length };
    }
    if (item.kind === 'file') {
      const parsed = await parseDocument({ bytes, filename: item.filename ?? 'upload', contentType: item.content_type });
      return { chunks: chunkText(parsed.text, { ...opts, isMarkdown: parsed.isMarkdown, title: item.title ?? parsed.title }), format: parsed.format, parsedBytes: parsed.text.length };
    }
    const text = bytes.toString('utf8');
    return { chunks: chunkText(text, { ...opts, isMarkdown: item.is_markdown }), format: item.is_markdown ? 'markdown' : 'text', parsedBytes: text.length };
  }
}
