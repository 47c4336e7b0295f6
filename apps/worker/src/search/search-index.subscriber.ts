import type { DataSource } from 'typeorm';
import type { RecordedEvent } from '../../../../libs/eventstore/src/event-store.port';
import type { Embedder } from '../../../../libs/embeddings/src';
import type { BlobStore } from '../../../../libs/persistence/src/blob-store';
import type { Processor } from '../../../../libs/persistence/src/projection';
import type { ItemChunked, ItemDeleted } from '../../../../libs/domain/src/items/item.events';
import type { SearchCatalog } from './search-catalog';
import { chunkDocs, embeddingText, type IndexedItem, type StoredChunk } from './chunk-docs';

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

  async handle(event: RecordedEvent, target?: (databaseId: string, store: 'memory' | 'knowledge') => Promise<string | null>): Promise<void> {
    const indexFor = target ?? ((db, store) => this.catalog.indexName(db, store));
    if (event.type === 'ItemDeleted') {
      const d = (event as unknown as ItemDeleted).data;
      const name = await indexFor(d.databaseId, d.store === 'memory' ? 'memory' : 'knowledge');
      if (name) await this.catalog.index.deleteItems(name, [d.itemKey], event.position);
      return;
    }
    await this.itemsAt(event.position);
    const d = (event as unknown as ItemChunked).data;
    const [item]: (IndexedItem & { content_version: number; chunks_sha256: string | null })[] = await this.ds.query(
      'SELECT * FROM rm_items WHERE database_id = $1 AND item_key = $2',
      [d.databaseId, d.itemKey],
    );
    if (!item) return; // deleted: its ItemDeleted removes the chunks
    // ItemChunked of a superseded version: later events decide. Attribute changes re-stamp the current chunks.
    if (event.type === 'ItemChunked' && item.content_version !== d.contentVersion) return;
    const chunksSha256 = event.type === 'ItemChunked' ? d.chunksSha256 : item.chunks_sha256;
    if (!chunksSha256) return; // not chunked yet: ItemChunked will carry the new attributes
    const name = await indexFor(d.databaseId, item.store);
    if (!name) return; // database gone
    const chunks: StoredChunk[] = JSON.parse((await this.blobs.get(d.databaseId, chunksSha256)).toString('utf8'));
    const vectors = chunks.length ? await this.embedder.embed(chunks.map(embeddingText)) : [];
    await this.catalog.index.upsert(name, chunkDocs(item, chunks, vectors, event.position, event.metadata.occurredAt));
    // Chunks of earlier versions beyond the new chunk count.
    await this.catalog.index.deleteItems(name, [d.itemKey], event.position - 1);
  }
}
