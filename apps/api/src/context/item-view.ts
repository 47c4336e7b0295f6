import type { DataSource } from 'typeorm';
import { DomainError, invalid, notFound } from '../../../../libs/domain/src/errors';
import type { Store } from '../../../../libs/domain/src/items/item.events';
import { inActiveCollection } from '../../../../projections/databases/databases.queries';

export interface ItemRecord {
  database_id: string;
  item_key: string;
  item_id: string;
  collection: string;
  store: Store;
  kind: string;
  source_type: string;
  title: string | null;
  filename: string | null;
  content_sha256: string;
  content_type: string;
  content_version: number;
  pairs: boolean;
  bytes: string;
  metadata: Record<string, unknown>;
  additional_metadata: Record<string, unknown>;
  relations: string[];
  acl: string[] | null;
  app_kind: string | null;
  app_provider: string | null;
  infer: boolean;
  status: string;
  error_code: string | null;
  error_message: string | null;
  chunk_count: number;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * The one item with this id in a collection (and store, when given); both stores holding it needs `type`. An item of
 * a collection being deleted is not found.
 */
export async function findItem(ds: DataSource, databaseId: string, collection: string, itemId: string, store?: Store): Promise<ItemRecord> {
  const rows: ItemRecord[] = await ds.query(
    `SELECT * FROM rm_items i WHERE database_id = $1 AND collection = $2 AND item_id = $3 ${store ? 'AND store = $4' : ''} AND ${inActiveCollection('i')}`,
    store ? [databaseId, collection, itemId, store] : [databaseId, collection, itemId],
  );
  if (!rows.length) throw notFound('ITEM_NOT_FOUND', `no item with id '${itemId}' in collection '${collection}'`);
  if (rows.length > 1) throw new DomainError('validation', 'AMBIGUOUS_ITEM', `both stores hold an item '${itemId}'; send type 'memory' or 'knowledge'`);
  return rows[0];
}

export function parseStoreType(v: unknown): Store | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === 'memory' || v === 'knowledge') return v;
  throw invalid(`type must be 'memory' or 'knowledge'`);
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** How an item is shown by /context/list and the metadata edit. */
export function itemView(r: ItemRecord) {
  return {
    id: r.item_id,
    collection: r.collection,
    type: r.store,
    source_type: r.source_type,
    title: r.title,
    filename: r.filename,
    metadata: r.metadata,
    additional_metadata: r.additional_metadata,
    acl: r.acl,
    relations: { ids: r.relations },
    app_kind: r.app_kind,
    app_provider: r.app_provider,
    indexing_status: r.status,
    error_code: r.error_code,
    chunk_count: r.chunk_count,
    bytes: Number(r.bytes),
    expires_at: iso(r.expires_at),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
