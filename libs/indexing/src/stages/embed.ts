import type { Embedder } from '@crs/embeddings';
import { embeddingText } from '@crs/search/chunk-docs';
import { active, PipelineFailure, type Work } from './work';

/** Embeds a batch's chunks with this worker's embedder, which must be the one each item's database embeds with. */
export class ChunkEmbedder {
  constructor(private readonly embedder: Embedder) {}

  get modelId(): string {
    return this.embedder.modelId;
  }

  /** Fails the items whose database embeds with another model than this worker's. */
  refuseOtherEmbedders(work: Work[]): void {
    for (const w of active(work)) {
      if (w.item.embedder.modelId !== this.embedder.modelId) {
        w.failure = new PipelineFailure('EMBEDDER_MISMATCH', `database embeds with ${w.item.embedder.modelId} but this worker runs ${this.embedder.modelId}; re-embed the database or configure the same embedder`);
      }
    }
  }

  /** Embeds all the batch's chunks in one call, filling the cache the index reads. */
  async embedAll(work: Work[]): Promise<void> {
    const texts = active(work).flatMap((w) => w.chunks!.map(embeddingText));
    if (texts.length) await this.embedder.embed(texts);
  }
}
