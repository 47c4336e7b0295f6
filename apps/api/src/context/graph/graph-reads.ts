import type { DataSource } from 'typeorm';
import { isVisible } from '@crs/domain/acl';
import type { Store } from '@crs/domain/items/item.events';
import { servedItemsWithId } from '@crs/projections/items/items.queries';

/**
 * What the graph reads share. Only completed items count, and with `acl` only items the caller may see: nothing
 * derived from a hidden document is returned. An expired memory stops surfacing anywhere, its graph included, and so
 * does everything of a collection being deleted.
 */

/** The scope parameters every graph read takes. */
export interface GraphScope {
  database: string;
  collection: string;
  /** principals the read runs on behalf of, as sent (same meaning as in /query) */
  acl?: unknown[];
}

/** An entity as the original SDK shows it; the database id is its namespace. */
export const graphEntity = (namespace: string, key: string, name: string, type: string) => ({ name, type, namespace, entity_id: key, identifier: key });

export type GraphEntityView = ReturnType<typeof graphEntity>;

/** The items with this id in the collection (one per store, or the one of `store`) that are served and the caller may see. */
export async function visibleItemsWithId(ds: DataSource, databaseId: string, collection: string, id: string, caller: string[] | null, store?: Store) {
  const rows = await servedItemsWithId(ds, databaseId, collection, id, store);
  return rows.filter((i) => isVisible(i.acl, caller));
}
