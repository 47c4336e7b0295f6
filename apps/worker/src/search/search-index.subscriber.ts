import type { DataSource } from 'typeorm';
import type { RecordedEvent } from '../../../../libs/eventstore/src/event-store.port';
import type { Embedder } from '../../../../libs/embeddings/src';
import type { BlobStore } from '../../../../libs/persistence/src/blob-store';
import type { Processor } from '../../../../libs/persistence/src/projection';
import { mapLimit } from '../../../../libs/persistence/src/map-limit';
import type { ItemChunked, ItemDeleted } from '../../../../libs/domain/src/items/item.events';
import type { SearchCatalog } from './search-catalog';
import { chunkDocs, embeddingText, type IndexedItem, type StoredChunk } from './chunk-docs';
import type { ChunkDoc } from '../../../../libs/search/src/search-index.port';

/**
 * Projects what the pipeline recorded (ItemChunked: the chunk list blob) into the search index, idempotent by
 * version (the event position). Vectors come from the embedding cache keyed by (model, content hash), so
 * replaying never calls the embedding model. Attributes come from the items read model.
 */
export class SearchIndexSubscriber implements Processor {
  readonly kind = 'processor' as const;
  readonly name = 'search-index';
  readonly handles = ['ItemChunked', 'ItemDeleted', 'ItemMetadataUpdated', 'AclChanged'] as const;

  constructor(
    private readonly ds: DataSource,
    private readonly catalog: SearchCatalog,
    private readonly blobs: BlobStore,
    private readonly embedder: Embedder,
    /** Resolves once the items read model has processed a position (attributes are read from it). */
    private readonly itemsAt: (position: number) => Promise<unknown> = async () => undefined,
  ) {}

  async handle(event: RecordedEvent, target?: IndexTarget): Promise<void> {
    await this.handleBatch([event], target);
  }

  /**
   * A batch in log order: every chunk write of the batch goes to the engine as one upsert per index (one embedding
   * call for all texts, from the cache), then the deletions, each bounded by its own version, so the outcome is the
   * same as applying the events one by one.
   */
  async handleBatch(events: RecordedEvent[], target?: IndexTarget): Promise<void> {
    await this.writeBatch(events, target);
  }

  /** handleBatch, saying what it wrote. */
  async writeBatch(events: RecordedEvent[], target?: IndexTarget): Promise<WrittenItem[]> {
    const indexFor: IndexTarget = target ?? ((db, store) => this.catalog.indexName(db, store));
    await this.itemsAt(events[events.length - 1].position);
    const writes: { index: string; item: IndexedItem & { content_version: number }; chunks: StoredChunk[]; event: RecordedEvent }[] = [];
    const deletes: { index: string; itemKey: string; version: number }[] = [];
    // The items of the whole batch in one query; their chunk lists read in parallel below.
    const keyed = events.filter((e) => e.type !== 'ItemDeleted').map((e) => (e as unknown as ItemChunked).data);
    const rows: (IndexedItem & { database_id: string; item_key: string; content_version: number; chunks_sha256: string | null })[] = keyed.length
      ? await this.ds.query('SELECT * FROM rm_items WHERE (database_id, item_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))', [keyed.map((d) => d.databaseId), keyed.map((d) => d.itemKey)])
      : [];
    const items = new Map(rows.map((r) => [`${r.database_id}/${r.item_key}`, r]));
    const pending: { index: string; item: IndexedItem & { content_version: number }; chunksSha256: string; databaseId: string; event: RecordedEvent }[] = [];
    for (const event of events) {
      if (event.type === 'ItemDeleted') {
        const d = (event as unknown as ItemDeleted).data;
        const name = await indexFor(d.databaseId, d.store === 'memory' ? 'memory' : 'knowledge');
        if (name) deletes.push({ index: name, itemKey: d.itemKey, version: event.position });
        continue;
      }
      const d = (event as unknown as ItemChunked).data;
      const item = items.get(`${d.databaseId}/${d.itemKey}`);
      if (!item) continue; // deleted: its ItemDeleted removes the chunks
      // ItemChunked of a superseded version: later events decide. Attribute changes re-stamp the current chunks.
      if (event.type === 'ItemChunked' && item.content_version !== d.contentVersion) continue;
      const chunksSha256 = event.type === 'ItemChunked' ? d.chunksSha256 : item.chunks_sha256;
      if (!chunksSha256) continue; // not chunked yet: ItemChunked will carry the new attributes
      const name = await indexFor(d.databaseId, item.store);
      if (!name) continue; // database gone
      pending.push({ index: name, item, chunksSha256, databaseId: d.databaseId, event });
      // Chunks of earlier versions beyond the new chunk count.
      deletes.push({ index: name, itemKey: d.itemKey, version: event.position - 1 });
    }
    const lists = await mapLimit(pending, 8, async (p) => JSON.parse((await this.blobs.get(p.databaseId, p.chunksSha256)).toString('utf8')) as StoredChunk[]);
    pending.forEach((p, i) => writes.push({ index: p.index, item: p.item, chunks: lists[i], event: p.event }));
    const texts = writes.flatMap((w) => w.chunks.map(embeddingText));
    const vectors = texts.length ? await this.embedder.embed(texts) : [];
    const byIndex = new Map<string, ChunkDoc[]>();
    let offset = 0;
    for (const w of writes) {
      const docs = chunkDocs(w.item, w.chunks, vectors.slice(offset, offset + w.chunks.length), w.event.position, w.event.metadata.occurredAt);
      offset += w.chunks.length;
      byIndex.set(w.index, [...(byIndex.get(w.index) ?? []), ...docs]);
    }
    for (const [index, docs] of byIndex) if (docs.length) await this.catalog.index.upsert(index, docs);
    const deletesByIndex = new Map<string, { itemId: string; version: number }[]>();
    for (const d of deletes) deletesByIndex.set(d.index, [...(deletesByIndex.get(d.index) ?? []), { itemId: d.itemKey, version: d.version }]);
    for (const [index, items] of deletesByIndex) await this.catalog.index.deleteItemVersions(index, items);
    return writes.map((w) => ({ index: w.index, databaseId: w.item.database_id, itemKey: w.item.item_key, contentVersion: w.item.content_version, version: w.event.position }));
  }

  /**
   * Removes what a replay running beside the live service wrote for items deleted (or superseded) since it read them.
   * The live service deletes an item's chunks only after the items read model has dropped it, so a write that landed
   * after that delete is found here: the read model no longer holds the item at the version written. (The index keeps
   * no tombstone, so the version check that orders writes cannot order a write after a delete.)
   */
  async dropSuperseded(written: WrittenItem[]): Promise<number> {
    if (!written.length) return 0;
    const current: { database_id: string; item_key: string; content_version: number }[] = await this.ds.query(
      'SELECT database_id, item_key, content_version FROM rm_items WHERE (database_id, item_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))',
      [written.map((w) => w.databaseId), written.map((w) => w.itemKey)],
    );
    const live = new Map(current.map((r) => [`${r.database_id}/${r.item_key}`, Number(r.content_version)]));
    const stale = new Map<string, { itemId: string; version: number }[]>();
    for (const w of written) {
      if (live.get(`${w.databaseId}/${w.itemKey}`) === Number(w.contentVersion)) continue;
      stale.set(w.index, [...(stale.get(w.index) ?? []), { itemId: w.itemKey, version: w.version }]);
    }
    for (const [index, items] of stale) await this.catalog.index.deleteItemVersions(index, items);
    return [...stale.values()].reduce((n, items) => n + items.length, 0);
  }
}

/** What one handled event wrote: an item's chunks, at the event's position, into an index. */
export interface WrittenItem {
  index: string;
  databaseId: string;
  itemKey: string;
  contentVersion: number;
  version: number;
}

type IndexTarget = (databaseId: string, store: 'memory' | 'knowledge') => Promise<string | null>;

