import type { Pool } from 'pg';

/**
 * Small blobs as rows of one Postgres table, `blob_rows(database_id, sha256, bytes, touched_at)`: a memory of a hundred
 * characters, its chunk list and its graph are a few hundred bytes each, and a file of their own costs a 4 KiB block
 * and a directory entry apiece (8.6 KB of disk per memory, against about 0.4 KB as rows).
 *
 * The same rules as the files (BlobStore): a `put` of stored bytes renews their time, which a collection's deletion
 * (`sweep`) respects; a database once deleted takes no more writes. A deleted database's id is recorded in
 * `blob_rows_deleted` before its rows go, and every insert checks it in the same statement; the rows are deleted under a
 * lock that waits for inserts already running, so none of them can land after the deletion.
 */
export class BlobRows {
  constructor(private readonly pool: Pool) {}

  static readonly DDL = [
    `CREATE TABLE IF NOT EXISTS blob_rows (
      database_id uuid NOT NULL,
      sha256 bytea NOT NULL,
      bytes bytea NOT NULL,
      touched_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (database_id, sha256)
    )`,
    `CREATE TABLE IF NOT EXISTS blob_rows_deleted (database_id uuid PRIMARY KEY)`,
  ];

  /** Creates the tables; the caller serializes schema changes across processes. */
  async init(): Promise<void> {
    for (const ddl of BlobRows.DDL) await this.pool.query(ddl);
  }

  /** Stores (or renews the time of) one blob; false when its database was deleted (nothing is written). */
  async put(databaseId: string, sha256: string, bytes: Buffer): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO blob_rows (database_id, sha256, bytes)
       SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM blob_rows_deleted WHERE database_id = $1)
       ON CONFLICT (database_id, sha256) DO UPDATE SET touched_at = now()`,
      [databaseId, Buffer.from(sha256, 'hex'), bytes],
    );
    return rowCount === 1;
  }

  /**
   * Stores (or renews) several blobs in one statement, as `put` does each: returns the databases that were deleted (in
   * lowercase), of which nothing was written. A blob listed twice is written once.
   */
  async putMany(blobs: { databaseId: string; sha256: string; bytes: Buffer }[]): Promise<Set<string>> {
    const unique = new Map(blobs.map((b) => [`${b.databaseId.toLowerCase()}/${b.sha256}`, b]));
    const refused = new Set<string>();
    if (!unique.size) return refused;
    // In one order (database, then hash) in every statement: two batches renewing the same blobs (a graph many
    // memories share) take their row locks in the same order, so they wait for each other instead of deadlocking. The
    // ORDER BY keeps it: for 20 rows or more the planner hashes the list to check the deleted databases (a hash right
    // anti join) and hands the rows on in hash order, which differs between lists of different sizes, and concurrent
    // pipeline batches deadlocked on their shared blobs (an item failed after three such retries under a steady load).
    const rows = [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
    // ON CONFLICT DO UPDATE may touch a row once per statement: the list holds each blob once (above).
    const { rows: written } = await this.pool.query<{ database_id: string }>(
      `INSERT INTO blob_rows (database_id, sha256, bytes)
       SELECT u.database_id, u.sha256, u.bytes FROM unnest($1::uuid[], $2::bytea[], $3::bytea[]) AS u(database_id, sha256, bytes)
       WHERE NOT EXISTS (SELECT 1 FROM blob_rows_deleted d WHERE d.database_id = u.database_id)
       ORDER BY u.database_id, u.sha256
       ON CONFLICT (database_id, sha256) DO UPDATE SET touched_at = now()
       RETURNING database_id`,
      [rows.map((r) => r.databaseId), rows.map((r) => Buffer.from(r.sha256, 'hex')), rows.map((r) => r.bytes)],
    );
    const accepted = new Set(written.map((r) => r.database_id));
    for (const r of rows) if (!accepted.has(r.databaseId.toLowerCase())) refused.add(r.databaseId.toLowerCase());
    return refused;
  }

  async get(databaseId: string, sha256: string): Promise<Buffer | null> {
    const { rows } = await this.pool.query<{ bytes: Buffer }>('SELECT bytes FROM blob_rows WHERE database_id = $1 AND sha256 = $2', [databaseId, Buffer.from(sha256, 'hex')]);
    return rows[0]?.bytes ?? null;
  }

  /** Several blobs in one statement: those stored as rows, keyed `<database id, lowercase>/<sha256>`; the others are absent. */
  async getMany(keys: { databaseId: string; sha256: string }[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    if (!keys.length) return found;
    const { rows } = await this.pool.query<{ database_id: string; sha256: Buffer; bytes: Buffer }>(
      `SELECT b.database_id, b.sha256, b.bytes
       FROM unnest($1::uuid[], $2::bytea[]) AS k(database_id, sha256)
       JOIN blob_rows b ON b.database_id = k.database_id AND b.sha256 = k.sha256`,
      [keys.map((k) => k.databaseId), keys.map((k) => Buffer.from(k.sha256, 'hex'))],
    );
    for (const r of rows) found.set(`${r.database_id}/${r.sha256.toString('hex')}`, r.bytes);
    return found;
  }

  async has(databaseId: string, sha256: string): Promise<boolean> {
    const { rows } = await this.pool.query('SELECT 1 FROM blob_rows WHERE database_id = $1 AND sha256 = $2', [databaseId, Buffer.from(sha256, 'hex')]);
    return rows.length > 0;
  }

  /** Blobs stored as rows for one database. */
  async count(databaseId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM blob_rows WHERE database_id = $1', [databaseId]);
    return Number(rows[0].n);
  }

  async delete(databaseId: string, sha256: string): Promise<void> {
    await this.pool.query('DELETE FROM blob_rows WHERE database_id = $1 AND sha256 = $2', [databaseId, Buffer.from(sha256, 'hex')]);
  }

  /**
   * Removes one blob unless it was stored or renewed within `graceMs`. `removed` and `absent` both mean it is not
   * stored here now; `spared` means it was kept. A `put` renewing it at that moment waits on the row, and either
   * renews it first (spared) or writes it again after the delete.
   */
  async sweep(databaseId: string, sha256: string, graceMs: number): Promise<'removed' | 'spared' | 'absent'> {
    const { rows } = await this.pool.query<{ removed: boolean; present: boolean }>(
      `WITH d AS (
         DELETE FROM blob_rows WHERE database_id = $1 AND sha256 = $2 AND touched_at < now() - ($3 || ' milliseconds')::interval RETURNING 1
       )
       SELECT EXISTS (SELECT 1 FROM d) AS removed, EXISTS (SELECT 1 FROM blob_rows WHERE database_id = $1 AND sha256 = $2) AS present`,
      [databaseId, Buffer.from(sha256, 'hex'), String(graceMs)],
    );
    return rows[0].removed ? 'removed' : rows[0].present ? 'spared' : 'absent';
  }

  /** Records the database as deleted (refusing later puts), then removes its rows once running inserts have ended. */
  async deleteDatabase(databaseId: string): Promise<void> {
    await this.pool.query('INSERT INTO blob_rows_deleted (database_id) VALUES ($1) ON CONFLICT DO NOTHING', [databaseId]);
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // SHARE conflicts with the inserts' ROW EXCLUSIVE: an insert that began before the record above committed is
      // waited for, and the DELETE's snapshot, taken after the lock, sees its row.
      await client.query('LOCK TABLE blob_rows IN SHARE MODE');
      await client.query('DELETE FROM blob_rows WHERE database_id = $1', [databaseId]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}
