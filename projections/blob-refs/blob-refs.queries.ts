import { BlobStore } from '@crs/persistence/blob-store';
import type { Sql } from '@crs/persistence/data-source';

/** A row of rm_blob_refs: some item of a collection references a blob (its sha256 as 32 bytes). */
export interface BlobRefRow {
  database_id: string;
  sha256: Buffer;
  collection: string;
}

/** A row of rm_blob_ref_items: an item's collection (its key, 32 hex digits, as a uuid), for events that name none. */
export interface BlobRefItemRow {
  database_id: string;
  item_key: string;
  collection: string;
}

/**
 * The blobs only the given collection's items reference (its deletion may remove them from disk), given every read
 * model has seen the deletion request. Lowercase hex.
 */
export async function blobsOnlyIn(sql: Sql, databaseId: string, collection: string): Promise<string[]> {
  const rows: { sha256: string }[] = await sql.query(
    `SELECT encode(r.sha256, 'hex') AS sha256 FROM rm_blob_refs r
     WHERE r.database_id = $1 AND r.collection = $2
       AND NOT EXISTS (SELECT 1 FROM rm_blob_refs o WHERE o.database_id = $1 AND o.sha256 = r.sha256 AND o.collection <> $2)`,
    [databaseId, collection],
  );
  return rows.map((r) => r.sha256);
}

/** Which of these blobs (lowercase hex) some item of the database references. */
export async function referencedBlobs(sql: Sql, databaseId: string, shas: string[]): Promise<Set<string>> {
  // Only lowercase hex is ever stored, so anything else is referenced by nobody (and would not decode).
  const rows: { sha256: string }[] = await sql.query(
    `SELECT DISTINCT encode(sha256, 'hex') AS sha256 FROM rm_blob_refs
     WHERE database_id = $1 AND sha256 IN (SELECT decode(s, 'hex') FROM unnest($2::text[]) s)`,
    [databaseId, shas.filter((s) => BlobStore.isAddress(s))],
  );
  return new Set(rows.map((r) => r.sha256));
}
