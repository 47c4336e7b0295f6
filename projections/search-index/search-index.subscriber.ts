import type { DataSource } from 'typeorm';
import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import { EmbeddingError, type VectorSpaces } from '@crs/embeddings';
import type { RunnerLogger } from '@crs/persistence/projection-runner';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { Processor } from '@crs/persistence/projection';
import { isEventOf } from '@crs/domain/domain-event';
import type { IndexRef, SearchCatalog } from './search-catalog';
import { chunkDocs, embeddingText, parseChunkList, type IndexedItem } from '@crs/search/chunk-docs';
import type { ChunkDoc } from '@crs/search/search-index.port';
import { contentVersionsByKeys, itemsInActiveCollectionsByKeys } from '@crs/projections/items/items.queries';

/**
 * Projects what the pipeline recorded (ItemChunked: the chunk list blob) into the search index, idempotent by
 * version (the event position). Vectors come from the embedding cache keyed by (model, content hash), so
 * replaying never calls the embedding model. Attributes come from the items read model.
 *
 * Each index holds the vectors of one model (its catalog entry says which): chunks are embedded in that space, by the
 * configured embedder when it is that model, otherwise from the cache (VectorSpaces). A write whose vectors the cache
 * lacks is an error in a replay; the live processor skips it instead, naming the database (its index is rebuilt by
 * `crs databases reembed`), so one database's vector space never stops indexing for the others.
 */
export class SearchIndexSubscriber implements Processor {
  readonly kind = 'processor' as const;
  readonly name = 'search-index';
  readonly handles = ['ItemChunked', 'ItemDeleted', 'ItemMetadataUpdated', 'AclChanged'] as const;

  constructor(
    private readonly ds: DataSource,
    private readonly catalog: SearchCatalog,
    private readonly blobs: BlobStore,
    private readonly spaces: VectorSpaces,
    /** Resolves once the items and databases read models have processed a position (attributes are read from them). */
    private readonly itemsAt: (position: number) => Promise<unknown> = async () => undefined,
    private readonly log?: RunnerLogger,
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
    return this.writePrepared(await this.prepareBatch(events, target));
  }

  /**
   * The reading half of a batch: the items' rows, their chunk lists and vectors, the documents and deletions to write.
   * It writes nothing, so a replay prepares the next batch while the engine writes this one (writePrepared, in order).
   */
  async prepareBatch(events: RecordedEvent[], target?: IndexTarget): Promise<PreparedBatch> {
    const live = !target;
    const indexFor: IndexTarget = target ?? ((db, store) => this.catalog.entry(db, store));
    await this.itemsAt(events[events.length - 1].position);
    const deletes: { index: string; itemKey: string; version: number }[] = [];
    // The items of the whole batch in one query, those of an active collection only (one being deleted, or deleted
    // while the items read model still holds its rows, is skipped: its purge must be the last word, docs/databases.md);
    // their chunk lists read together below.
    const indexed = events.filter((e) => isEventOf(e, this.handles));
    const keyed = indexed.filter((e) => e.type !== 'ItemDeleted').map((e) => e.data);
    const rows = keyed.length ? await itemsInActiveCollectionsByKeys(this.ds, keyed.map((d) => d.databaseId), keyed.map((d) => d.itemKey)) : [];
    const items = new Map(rows.map((r) => [`${r.database_id}/${r.item_key}`, r]));
    const pending: { index: IndexRef; item: IndexedItem & { content_version: number }; chunksSha256: string; databaseId: string; event: RecordedEvent }[] = [];
    for (const event of indexed) {
      if (event.type === 'ItemDeleted') {
        const d = event.data;
        const ref = await indexFor(d.databaseId, d.store === 'memory' ? 'memory' : 'knowledge');
        if (ref) deletes.push({ index: ref.name, itemKey: d.itemKey, version: event.position });
        continue;
      }
      const d = event.data;
      const item = items.get(`${d.databaseId}/${d.itemKey}`);
      if (!item) continue; // deleted (its ItemDeleted removes the chunks), or its collection is being deleted
      // ItemChunked of a superseded version: later events decide. Attribute changes re-stamp the current chunks.
      if (event.type === 'ItemChunked' && item.content_version !== event.data.contentVersion) continue;
      const chunksSha256 = event.type === 'ItemChunked' ? event.data.chunksSha256 : item.chunks_sha256;
      if (!chunksSha256) continue; // not chunked yet: ItemChunked will carry the new attributes
      const ref = await indexFor(d.databaseId, item.store);
      if (!ref) continue; // database gone
      pending.push({ index: ref, item, chunksSha256, databaseId: d.databaseId, event });
    }
    // Every chunk list of the batch in one read (rows in one statement; only large lists are files).
    const blobs = await this.blobs.getMany(pending.map((p) => ({ databaseId: p.databaseId, sha256: p.chunksSha256 })));
    const lists = pending.map((p, i) => {
      const bytes = blobs[i];
      if (bytes) return parseChunkList(bytes);
      // Its blob is gone (its collection or database deleted since the rows were read): nothing to write. Retrying
      // would stop indexing for every database.
      this.log?.error({ databaseId: p.databaseId, itemKey: p.item.item_key, chunks: p.chunksSha256 }, 'chunk list blob missing: chunk write skipped');
      return null;
    });
    const writes = pending.flatMap((p, i) => (lists[i] ? [{ index: p.index, item: p.item, chunks: lists[i]!, event: p.event }] : []));
    // One embedding call per index (its vector space), all texts of the batch at once.
    const upserts: PreparedBatch['upserts'] = [];
    for (const group of groupBy(writes, (w) => w.index.name).values()) {
      const ref = group[0].index;
      const texts = group.flatMap((w) => w.chunks.map(embeddingText));
      let vectors: Float32Array[];
      const embedder = this.spaces.for(this.spaceOf(ref));
      try {
        vectors = texts.length ? await embedder.embed(texts) : [];
      } catch (err) {
        // Skipped only for an index of another model (the configured one failing is an outage: retried).
        if (!live || embedder === this.spaces.configured || !(err instanceof EmbeddingError) || err.code !== 'model_unavailable') throw err;
        this.log?.error({ index: ref.name, databaseId: group[0].item.database_id, items: group.length, err: err.message }, 'search index holds another model\'s vectors: chunk writes skipped');
        continue;
      }
      const docs: ChunkDoc[] = [];
      let offset = 0;
      for (const w of group) {
        docs.push(...chunkDocs(w.item, w.chunks, vectors.slice(offset, offset + w.chunks.length), w.event.position, w.event.metadata.occurredAt));
        offset += w.chunks.length;
        // Chunks of earlier versions beyond the new chunk count.
        deletes.push({ index: ref.name, itemKey: w.item.item_key, version: w.event.position - 1 });
      }
      upserts.push({
        index: ref.name,
        docs,
        written: group.map((w) => ({ index: ref.name, databaseId: w.item.database_id, itemKey: w.item.item_key, contentVersion: w.item.content_version, version: w.event.position })),
      });
    }
    return { upserts, deletes };
  }

  /** The writing half: each index's upsert, then the deletions, each bounded by its own version; says what it wrote. */
  async writePrepared(batch: PreparedBatch): Promise<WrittenItem[]> {
    const written: WrittenItem[] = [];
    for (const u of batch.upserts) {
      if (u.docs.length) await this.catalog.index.upsert(u.index, u.docs);
      written.push(...u.written);
    }
    const deletesByIndex = groupBy(batch.deletes, (d) => d.index);
    for (const [index, items] of deletesByIndex) await this.catalog.index.deleteItemVersions(index, items.map((d) => ({ itemId: d.itemKey, version: d.version })));
    return written;
  }

  /** The vector space of an index; one registered before the catalog recorded models holds the configured one's if its length fits. */
  private spaceOf(ref: IndexRef) {
    const configured = this.spaces.configured;
    return { modelId: ref.modelId ?? (ref.dimensions === configured.dimensions ? configured.modelId : `unknown (${ref.dimensions} dimensions)`), dimensions: ref.dimensions };
  }

  /**
   * Removes what a replay running beside the live service wrote for items deleted (or superseded) since it read them.
   * The live service deletes an item's chunks only after the items read model has dropped it, so a write that landed
   * after that delete is found here: the read model no longer holds the item at the version written. (The index keeps
   * no tombstone, so the version check that orders writes cannot order a write after a delete.)
   */
  async dropSuperseded(written: WrittenItem[]): Promise<number> {
    if (!written.length) return 0;
    const current = await contentVersionsByKeys(this.ds, written.map((w) => w.databaseId), written.map((w) => w.itemKey));
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

/** A batch read and ready to write: each index's documents (and what they are), then the deletions (each bounded by its own version, so their order does not matter). */
export interface PreparedBatch {
  upserts: { index: string; docs: ChunkDoc[]; written: WrittenItem[] }[];
  deletes: { index: string; itemKey: string; version: number }[];
}

/** What one handled event wrote: an item's chunks, at the event's position, into an index. */
export interface WrittenItem {
  index: string;
  databaseId: string;
  itemKey: string;
  contentVersion: number;
  version: number;
}

/** Where an event's chunks go: the live index (the catalog), or the new generation a rebuild fills. */
export type IndexTarget = (databaseId: string, store: 'memory' | 'knowledge') => Promise<IndexRef | null>;

function groupBy<T>(list: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const t of list) {
    const k = key(t);
    const group = out.get(k);
    if (group) group.push(t);
    else out.set(k, [t]);
  }
  return out;
}

