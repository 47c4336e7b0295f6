import type { DataSource } from 'typeorm';
import { DomainError, invalid, notFound } from '@crs/domain/errors';
import type { Store } from '@crs/domain/items/item.events';
import { itemsWithId, type ItemAccessColumns, type ItemRow } from '@crs/projections/items/items.queries';

/**
 * The one item with this id in a collection (and store, when given); both stores holding it needs `type`. An item of
 * a collection being deleted is not found. `access_acl` and `served` say who may see it now (a synced document's from
 * its resource's rules): a reader that serves its content checks them.
 */
export async function findItem(ds: DataSource, databaseId: string, collection: string, itemId: string, store?: Store): Promise<ItemRow & ItemAccessColumns> {
  const rows = await itemsWithId(ds, databaseId, collection, itemId, store);
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
export function itemView(r: ItemRow) {
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
