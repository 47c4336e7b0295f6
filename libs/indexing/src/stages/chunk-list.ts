import type { BatchOutcome } from '@crs/eventstore/command-handling';
import type { ItemState } from '@crs/domain/items/item.decider';
import type { ItemEvent } from '@crs/domain/items/item.events';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { StatusRecorder } from './status';
import { active, type Work } from './work';

/** Stores each item's chunk list as a blob and appends ItemChunked, which the search index projection acts on. */
export class ChunkLists {
  constructor(
    private readonly blobs: BlobStore,
    private readonly status: StatusRecorder,
  ) {}

  /** Every chunk list of the batch stored at once (the small ones in one statement). */
  async storeAll(work: Work[]): Promise<void> {
    const live = active(work);
    const stored = await this.blobs.putMany(live.map((w) => ({ databaseId: w.item.database_id, bytes: JSON.stringify(w.chunks) })));
    live.forEach((w, i) => {
      const outcome = stored[i];
      if ('sha256' in outcome) w.chunksSha256 = outcome.sha256;
      else this.status.unexpected(w, outcome.error); // (its database deleted meanwhile: the retry finds the item gone)
    });
  }

  /** Appends ItemChunked for the items not chunked yet, in one go. */
  recordChunked(work: Work[], embedder: string): Promise<BatchOutcome<unknown>[]> {
    return this.status.record(
      active(work).map((w) => ({
        ...this.status.on(w),
        decide: (state: ItemState): ItemEvent[] =>
          state.live && state.contentVersion === w.item.content_version && !state.chunked
            ? [{ type: 'ItemChunked', data: { databaseId: w.item.database_id, itemKey: w.item.item_key, contentVersion: w.item.content_version, chunksSha256: w.chunksSha256!, chunkCount: w.chunks!.length, embedder, format: w.format!, parsedBytes: w.parsedBytes! } }]
            : [],
      })),
    );
  }
}
