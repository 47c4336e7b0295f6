import type { ChunkDoc, Scalar, Store } from './search-index.port';
import { isIndexedMetadataKey } from './metadata-filter-tokens';

/** A stored chunk list entry (the ItemChunked blob). */
export interface StoredChunk {
  index: number;
  text: string;
  startChar: number;
  endChar: number;
  headingPath?: string[];
}

/** The item attributes a chunk carries into the index (from the items read model). */
export interface IndexedItem {
  database_id: string;
  item_key: string;
  collection: string;
  store: Store;
  kind: string;
  source_type: string;
  title: string | null;
  metadata: Record<string, unknown>;
  additional_metadata: Record<string, unknown>;
  acl: string[] | null;
  /** set on a synced document: its access is decided on each query, not by the index (see chunkDocs) */
  connector_id?: string | null;
  expires_at: string | Date | null;
  created_at: string | Date;
  updated_at: string | Date;
}

export const chunkIdFor = (itemKey: string, index: number) => `${itemKey}:${index}`;

/** The entries of a stored chunk list (the blob ItemChunked names). */
export const parseChunkList = (bytes: Buffer): StoredChunk[] => JSON.parse(bytes.toString('utf8')) as StoredChunk[];

/** Filterable values are scalars; arrays and objects are indexed as their JSON text. */
function scalars(record: Record<string, unknown>): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  for (const [k, v] of Object.entries(record)) {
    if (!isIndexedMetadataKey(k)) continue;
    out[k] = v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : JSON.stringify(v);
  }
  return out;
}

const ms = (v: string | Date | null) => (v === null ? null : new Date(v).getTime());

/**
 * `version` and `writtenAt` come from the event that wrote the chunks (never from the clock or from read-model
 * columns that later status changes move), so a rebuild reproduces every field.
 *
 * A synced document's chunks are indexed with no principals (unrestricted for the engine's ACL pre-filter): its
 * access is decided on each query from its resource's rules as they stand (items.queries.ts `itemsToCheck`), which
 * change without any event on the item. Principals stamped at indexing time would go stale, and the pre-filter would
 * drop chunks a widened rule allows; with none, the engine returns every candidate and the read-model check decides.
 */
export function chunkDocs(item: IndexedItem, chunks: StoredChunk[], vectors: Float32Array[], version: number, writtenAt: string): ChunkDoc[] {
  return chunks.map((c, i) => ({
    chunkId: chunkIdFor(item.item_key, c.index),
    itemId: item.item_key,
    store: item.store,
    collection: item.collection,
    title: item.title,
    text: c.text,
    vector: vectors[i],
    principals: item.connector_id ? null : (item.acl ?? null),
    metadata: scalars(item.metadata ?? {}),
    additionalMetadata: scalars(item.additional_metadata ?? {}),
    sourceType: item.source_type,
    isApp: item.kind === 'app' || !!item.connector_id || typeof item.additional_metadata?.connector_id === 'string',
    createdAt: ms(item.created_at)!,
    updatedAt: ms(writtenAt)!,
    expiresAt: ms(item.expires_at),
    version,
  }));
}

/** What gets embedded for a chunk: its text (which already leads with the title/heading context line). */
export const embeddingText = (c: StoredChunk) => c.text;
