import type { Sql } from '@crs/persistence/data-source';

/** A row of rm_item_tombstones: an item deleted on its own, whose stream stays until its collection or database goes. */
export interface ItemTombstoneRow {
  database_id: string;
  item_key: string;
  collection: string;
}

/** The keys of a database's (or collection's) items deleted one by one. */
export function deletedItemKeys(sql: Sql, databaseId: string, collection?: string): Promise<Pick<ItemTombstoneRow, 'item_key'>[]> {
  return collection
    ? sql.query('SELECT item_key FROM rm_item_tombstones WHERE database_id = $1 AND collection = $2', [databaseId, collection])
    : sql.query('SELECT item_key FROM rm_item_tombstones WHERE database_id = $1', [databaseId]);
}

/** The keys of every item stream of a database (or collection): its items' and those of its items deleted one by one. */
export function liveAndDeletedItemKeys(sql: Sql, databaseId: string, collection?: string): Promise<Pick<ItemTombstoneRow, 'item_key'>[]> {
  return collection
    ? sql.query(
        `SELECT item_key FROM rm_items WHERE database_id = $1 AND collection = $2
         UNION SELECT item_key FROM rm_item_tombstones WHERE database_id = $1 AND collection = $2`,
        [databaseId, collection],
      )
    : sql.query('SELECT item_key FROM rm_items WHERE database_id = $1 UNION SELECT item_key FROM rm_item_tombstones WHERE database_id = $1', [databaseId]);
}
