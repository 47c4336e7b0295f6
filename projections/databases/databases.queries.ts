/**
 * Reads of the databases read model that other reads join.
 *
 * A collection is served only while it is `active`: from the moment its deletion (or its database's) is accepted it
 * is `deleting`, and its rows must not leave the service, although the purge has not yet removed them from the other
 * read models and the search index. Every read of item-scoped rows filters with this condition, so the deletion
 * holds at once, whatever the purge's progress. A row is in an active collection only when that collection's row
 * says so: an item is ingested after its collection is created (the ingest waits for it), and a deleted collection
 * has no row.
 */
export function inActiveCollection(alias: string): string {
  return `EXISTS (SELECT 1 FROM rm_collections live WHERE live.database_id = ${alias}.database_id AND live.name = ${alias}.collection AND live.status = 'active')`;
}
