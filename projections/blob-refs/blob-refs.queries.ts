import type { Sql } from '@crs/persistence/data-source';

/** A row of rm_blob_refs: an item of a collection references a blob. */
export interface BlobRefRow {
  database_id: string;
  item_key: string;
  sha256: string;
  collection: string;
}

/**
 * The blobs only the given collection's items reference (its deletion may remove them from disk), given every read
 * model has seen the deletion request.
 */
export async function blobsOnlyIn(sql: Sql, databaseId: string, collection: string): Promise<string[]> {
  const rows: Pick<BlobRefRow, 'sha256'>[] = await sql.query(
    `SELECT DISTINCT r.sha256 FROM rm_blob_refs r
     WHERE r.database_id = $1 AND r.collection = $2
       AND NOT EXISTS (SELECT 1 FROM rm_blob_refs o WHERE o.database_id = $1 AND o.sha256 = r.sha256 AND o.collection <> $2)`,
    [databaseId, collection],
  );
  return rows.map((r) => r.sha256);
}

/** Which of these blobs some item of the database references. */
export async function referencedBlobs(sql: Sql, databaseId: string, shas: string[]): Promise<Set<string>> {
  const rows: Pick<BlobRefRow, 'sha256'>[] = await sql.query('SELECT DISTINCT sha256 FROM rm_blob_refs WHERE database_id = $1 AND sha256 = ANY($2)', [databaseId, shas]);
  return new Set(rows.map((r) => r.sha256));
}
