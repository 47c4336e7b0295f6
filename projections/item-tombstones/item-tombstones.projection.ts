import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import type { ReadModelProjection } from '@crs/persistence/projection';

/**
 * The items deleted one by one (`DELETE /context`). Their streams stay in the log, `ItemDeleted` being their record,
 * until their collection or database is deleted, which must then find them to delete them too (the items read model
 * no longer has their rows). A projection of its own: a table added to the items projection would change its schema
 * and make every upgrade rebuild rm_items while the service serves.
 */
export const itemTombstonesProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'item-tombstones',
  tables: ['rm_item_tombstones'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS rm_item_tombstones (
      database_id uuid NOT NULL,
      item_key text NOT NULL,
      collection text NOT NULL,
      PRIMARY KEY (database_id, item_key)
    )`,
  ],
  handles: ['ItemDeleted', 'DatabaseDeleted', 'CollectionDeleted'],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    if (event.type === 'ItemDeleted') {
      const d = event.data;
      // An item key hashes its collection, so a key deleted twice names the same collection: the first row stays.
      await sql.query('INSERT INTO rm_item_tombstones (database_id, item_key, collection) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [d.databaseId, d.itemKey, d.collection]);
    } else if (event.type === 'DatabaseDeleted') {
      await sql.query('DELETE FROM rm_item_tombstones WHERE database_id = $1', [event.data.databaseId]);
    } else if (event.type === 'CollectionDeleted') {
      await sql.query('DELETE FROM rm_item_tombstones WHERE database_id = $1 AND collection = $2', [event.data.databaseId, event.data.collection]);
    }
  },
};
