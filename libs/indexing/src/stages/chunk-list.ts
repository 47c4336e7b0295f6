import type { BatchOutcome } from '@crs/eventstore/command-handling';
import type { ItemState } from '@crs/domain/items/item.decider';
import type { ItemEvent } from '@crs/domain/items/item.events';
import type { BlobStore } from '@crs/persistence/blob-store';
import { mapLimit } from '@crs/persistence/map-limit';
import type { StatusRecorder } from './status';
import { active, IO_CONCURRENCY, type Work } from './work';

/** Stores each item's chunk list as a blob and appends ItemChunked, which the search index projection acts on. */
export class ChunkLists {
  constructor(
    private readonly blobs: BlobStore,
    private readonly status: StatusRecorder,
  ) {}

  async storeAll(work: Work[]): Promise<void> {
    await mapLimit(active(work), IO_CONCURRENCY, async (w) => {
      try {
        w.chunksSha256 = await this.blobs.put(w.item.database_id, JSON.stringify(w.chunks));
      } catch (err) {
        this.status.unexpected(w, err); // (its database deleted meanwhile: the retry finds the item gone)
      }
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
