import type { Sql } from '@crs/persistence/data-source';
import { queryPrepared } from '@crs/persistence/prepared';
import type { EmbedderSpec } from '@crs/domain/events';
import type { MetadataField } from '@crs/domain/metadata-schema';

/** A row of rm_databases. */
export interface DatabaseRow {
  id: string;
  org_id: string;
  name: string;
  status: 'provisioning' | 'ready' | 'deleting';
  metadata_schema: MetadataField[];
  embedder: EmbedderSpec;
  scheduler_ready: boolean;
  graph_ready: boolean;
  vs_knowledge_ready: boolean;
  vs_memories_ready: boolean;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A row of rm_collections. */
export interface CollectionRow {
  database_id: string;
  name: string;
  status: 'active' | 'deleting';
  created_at: Date;
  updated_at: Date;
}

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

/** The columns a database lookup reads (an explicit list: the lookup every request makes is a prepared statement). */
export type DatabaseLookupRow = Omit<DatabaseRow, 'created_by'>;
const DATABASE_COLUMNS = 'id, org_id, name, status, metadata_schema, embedder, scheduler_ready, graph_ready, vs_knowledge_ready, vs_memories_ready, created_at, updated_at';

/** An organization's database by name (deleting ones included); every request resolves its database through it. */
export async function findDatabaseByName(sql: Sql, orgId: string, name: string): Promise<DatabaseLookupRow | undefined> {
  const rows = await queryPrepared<DatabaseLookupRow>(sql, 'crs_database_find', `SELECT ${DATABASE_COLUMNS} FROM rm_databases WHERE org_id = $1 AND name = $2`, [orgId, name]);
  return rows[0];
}

/** An organization's database by id (deleting ones included). */
export async function findDatabaseById(sql: Sql, orgId: string, id: string): Promise<DatabaseLookupRow | undefined> {
  const rows: DatabaseLookupRow[] = await sql.query(`SELECT ${DATABASE_COLUMNS} FROM rm_databases WHERE org_id = $1 AND id = $2`, [orgId, id]);
  return rows[0];
}

/** An organization's databases not being deleted, by name. */
export function liveDatabasesOf(sql: Sql, orgId: string): Promise<DatabaseLookupRow[]> {
  return sql.query(`SELECT ${DATABASE_COLUMNS} FROM rm_databases WHERE org_id = $1 AND status <> 'deleting' ORDER BY name`, [orgId]);
}

/** The organization and embedder of each of these databases (those that still exist). */
export function databaseOwnersAndEmbedders(sql: Sql, ids: string[]): Promise<Pick<DatabaseRow, 'id' | 'org_id' | 'embedder'>[]> {
  return sql.query('SELECT id, org_id, embedder FROM rm_databases WHERE id = ANY($1::uuid[])', [ids]);
}

/** The organization a database belongs to, whatever its status; undefined when it does not exist. */
export async function organizationOfDatabase(sql: Sql, id: string): Promise<string | undefined> {
  const [row]: Pick<DatabaseRow, 'org_id'>[] = await sql.query('SELECT org_id FROM rm_databases WHERE id = $1', [id]);
  return row?.org_id;
}

/** A database's active collections, by name. */
export function activeCollections(sql: Sql, databaseId: string): Promise<Pick<CollectionRow, 'name' | 'created_at'>[]> {
  return sql.query(`SELECT name, created_at FROM rm_collections WHERE database_id = $1 AND status = 'active' ORDER BY name`, [databaseId]);
}

/**
 * Fills the model of search indexes registered before the catalog recorded models from their database's embedder,
 * when its length fits the index's. Fails when the databases read model does not exist yet (a new installation).
 */
export async function recordIndexModelsFromDatabases(sql: Sql): Promise<void> {
  await sql.query(
    `UPDATE search_indexes s SET model_id = d.embedder->>'modelId' FROM rm_databases d
         WHERE s.model_id IS NULL AND d.id = s.database_id AND (d.embedder->>'dimensions')::int = s.dimensions`,
  );
}
