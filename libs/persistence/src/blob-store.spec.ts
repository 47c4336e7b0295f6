import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { createTestDatabase } from '@crs/test/support/test-database';
import { BlobRows } from './blob-rows';
import { BlobStore, CACHE_ENTRY_OVERHEAD, DatabaseBlobsDeletedError } from './blob-store';

const DB = '0b7f3c5e-0000-4000-8000-000000000001';

describe('BlobStore', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'blobs-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('stores bytes under their sha256, atomically (no temp file left), and reads them back', async () => {
    const store = new BlobStore(root, { cacheBytes: 0 });
    const sha = await store.put(DB, 'hello blobs');
    expect(sha).toBe(BlobStore.hash('hello blobs'));
    expect(readFileSync(store.path(DB, sha), 'utf8')).toBe('hello blobs');
    expect(readdirSync(join(root, DB, sha.slice(0, 2)))).toEqual([sha]);
    expect((await store.get(DB, sha)).toString('utf8')).toBe('hello blobs');
  });

  it('answers a read of a blob it just stored from memory, and reads from disk without the cache', async () => {
    const cached = new BlobStore(root);
    const sha = await cached.put(DB, 'kept in memory');
    unlinkSync(cached.path(DB, sha));
    expect((await cached.get(DB, sha)).toString('utf8')).toBe('kept in memory');
    const uncached = new BlobStore(root, { cacheBytes: 0 });
    await expect(uncached.get(DB, sha)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('drops the least recently used blobs beyond its byte budget', async () => {
    // Each entry costs its 10 bytes, its key (the path) and the bookkeeping: the budget holds eight, not nine.
    const cost = 10 + new BlobStore(root).path(DB, BlobStore.hash('x')).length + CACHE_ENTRY_OVERHEAD;
    const store = new BlobStore(root, { cacheBytes: 8.5 * cost });
    const a = await store.put(DB, 'a'.repeat(10));
    const b = await store.put(DB, 'b'.repeat(10));
    await store.get(DB, a); // a is now the most recent
    for (let i = 0; i < 7; i++) await store.put(DB, `${i}`.repeat(10)); // nine in all: the oldest (b) goes
    expect(store.cacheUsage()).toEqual({ bytes: 8 * cost, entries: 8 });
    unlinkSync(store.path(DB, a));
    unlinkSync(store.path(DB, b));
    expect((await store.get(DB, a)).toString()).toBe('a'.repeat(10));
    await expect(store.get(DB, b)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('forgets a deleted database, and refuses a late write for it instead of making its directory again', async () => {
    const store = new BlobStore(root);
    const sha = await store.put(DB, 'secret of a deleted database');
    await store.deleteDatabase(DB);
    expect(existsSync(join(root, DB))).toBe(false);
    await expect(store.get(DB, sha)).rejects.toMatchObject({ code: 'ENOENT' });
    // Work in flight when it was deleted (a chunk list of an item claimed before): ids are never reused.
    await expect(store.put(DB, 'a chunk list written too late')).rejects.toBeInstanceOf(DatabaseBlobsDeletedError);
    expect(existsSync(join(root, DB))).toBe(false);
  });

  it("refuses a late write for a database another process deleted (its marker), without making the directory again", async () => {
    const worker = new BlobStore(root);
    const lifecycle = new BlobStore(root);
    await worker.put(DB, 'written before the deletion'); // this process knows the shard directory
    await lifecycle.deleteDatabase(DB);
    await expect(worker.put(DB, 'written before the deletion')).rejects.toBeInstanceOf(DatabaseBlobsDeletedError); // same shard
    await expect(new BlobStore(root).put(DB, 'another process, first write')).rejects.toBeInstanceOf(DatabaseBlobsDeletedError);
    expect(existsSync(join(root, DB))).toBe(false);
  });

  // Small blobs are written with synchronous calls, larger ones through the thread pool: both paths, same behaviour.
  for (const [path, syncBelowBytes] of [['synchronous', 1024], ['asynchronous', 0]] as const) {
    it(`recreates a directory another process removed behind its back (${path} write)`, async () => {
      const store = new BlobStore(root, { cacheBytes: 0, syncBelowBytes });
      await store.put(DB, 'first');
      rmSync(join(root, DB), { recursive: true, force: true });
      const sha = await store.put(DB, 'first'); // same shard directory, remembered as existing
      expect(readFileSync(store.path(DB, sha), 'utf8')).toBe('first');
      expect(readdirSync(join(root, DB, sha.slice(0, 2)))).toEqual([sha]); // no temp file left
    });
  }

  it('deletes one blob from disk and memory', async () => {
    const store = new BlobStore(root);
    const sha = await store.put(DB, 'short-lived');
    await store.delete(DB, sha);
    await expect(store.get(DB, sha)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('BlobStore with small blobs as rows', () => {
  let root: string;
  let pool: Pool;
  let rows: BlobRows;
  beforeAll(async () => {
    pool = new Pool({ connectionString: await createTestDatabase('blobrows'), max: 4 });
    rows = new BlobRows(pool);
    await rows.init();
  });
  afterAll(async () => pool.end());
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'blobs-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const db = () => randomUUID();

  it('keeps blobs up to the row size in Postgres and larger ones as files, and reads both back', async () => {
    const store = new BlobStore(root, { cacheBytes: 0, rows, rowMaxBytes: 64 });
    const id = db();
    const small = await store.put(id, 's'.repeat(64));
    const large = await store.put(id, 'L'.repeat(65));
    expect(await rows.has(id, small)).toBe(true);
    expect(existsSync(store.path(id, small))).toBe(false);
    expect(await rows.has(id, large)).toBe(false);
    expect(readFileSync(store.path(id, large), 'utf8')).toBe('L'.repeat(65));
    expect((await store.get(id, small)).toString()).toBe('s'.repeat(64));
    expect((await store.get(id, large)).toString()).toBe('L'.repeat(65));
    expect([await store.has(id, small), await store.has(id, large), await store.has(id, BlobStore.hash('never stored'))]).toEqual([true, true, false]);
    // Written as files before rows were used (rowMaxBytes 0), read the same.
    const files = new BlobStore(root, { cacheBytes: 0, rows, rowMaxBytes: 0 });
    const before = await files.put(id, 'an older small file');
    expect(existsSync(files.path(id, before))).toBe(true);
    expect((await store.get(id, before)).toString()).toBe('an older small file');
    await expect(store.get(id, BlobStore.hash('never stored'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reads several blobs at once, in the order asked: rows, files and cached ones, null for one stored nowhere', async () => {
    const store = new BlobStore(root, { cacheBytes: 0, rows, rowMaxBytes: 64 });
    const [a, b] = [db(), db()];
    const smallA = await store.put(a, 'small of a');
    const largeA = await store.put(a, 'L'.repeat(100));
    const smallB = await store.put(b, 'small of b');
    // The same hash under another database is another blob: not found there.
    const keys = [
      { databaseId: b, sha256: smallB },
      { databaseId: a, sha256: largeA },
      { databaseId: b, sha256: smallA },
      { databaseId: a, sha256: smallA },
      { databaseId: a, sha256: BlobStore.hash('never stored') },
      { databaseId: a.toUpperCase(), sha256: smallA },
    ];
    const text = (bytes: (Buffer | null)[]) => bytes.map((x) => x?.toString() ?? null);
    expect(text(await store.getMany(keys))).toEqual(['small of b', 'L'.repeat(100), null, 'small of a', null, 'small of a']);
    expect(await store.getMany([])).toEqual([]);
    // From the cache: a cached blob is not read again (its row is gone, the cached copy still answers).
    const cached = new BlobStore(root, { rows, rowMaxBytes: 64 });
    const c = db();
    const sha = await cached.put(c, 'cached small');
    await rows.delete(c, sha);
    expect(text(await cached.getMany([{ databaseId: c, sha256: sha }]))).toEqual(['cached small']);
    expect(text(await store.getMany([{ databaseId: c, sha256: sha }]))).toEqual([null]);
  });

  it('stores several blobs at once: rows in one statement, larger ones as files, each once; a deleted database refused for its own only', async () => {
    const store = new BlobStore(root, { cacheBytes: 0, rows, rowMaxBytes: 64 });
    const [a, gone] = [db(), db()];
    await store.put(gone, 'before');
    await new BlobStore(root, { cacheBytes: 0, rows, rowMaxBytes: 64 }).deleteDatabase(gone); // another process's deletion
    const outcomes = await store.putMany([
      { databaseId: a, bytes: 'small' },
      { databaseId: a, bytes: Buffer.from('L'.repeat(100)) },
      { databaseId: gone, bytes: 'late' },
      { databaseId: a.toUpperCase(), bytes: 'small' },
    ]);
    expect(outcomes.map((o) => ('sha256' in o ? o.sha256 : (o.error as Error).name))).toEqual([
      BlobStore.hash('small'),
      BlobStore.hash('L'.repeat(100)),
      'DatabaseBlobsDeletedError',
      BlobStore.hash('small'),
    ]);
    expect(await rows.count(a)).toBe(1);
    expect(existsSync(store.path(a, BlobStore.hash('L'.repeat(100))))).toBe(true);
    expect(await rows.count(gone)).toBe(0);
    expect((await store.get(a, BlobStore.hash('small'))).toString()).toBe('small');
    // Known deleted from then on, as after a refused put.
    await expect(store.put(gone, 'later')).rejects.toThrow(DatabaseBlobsDeletedError);
    expect(await store.putMany([])).toEqual([]);
  });

  it('stores the same blobs from concurrent batches listed in opposite orders without deadlocking', async () => {
    const store = new BlobStore(root, { cacheBytes: 0, rows, rowMaxBytes: 64 });
    const id = db();
    const blobs = Array.from({ length: 200 }, (_, i) => ({ databaseId: id, bytes: `shared ${i}` }));
    for (let round = 0; round < 10; round++) {
      const outcomes = await Promise.all([store.putMany(blobs), store.putMany([...blobs].reverse()), store.putMany(blobs)]);
      expect(outcomes.flat().filter((o) => 'error' in o)).toEqual([]);
    }
    expect(await rows.count(id)).toBe(200);
  });

  it('writes a batch of rows in key order whatever its size, so concurrent batches sharing blobs take their locks in one order', async () => {
    const store = new BlobStore(root, { cacheBytes: 0, rows, rowMaxBytes: 64 });
    for (const size of [5, 20, 96, 150]) {
      const id = db();
      await store.putMany(Array.from({ length: size }, (_, i) => ({ databaseId: id, bytes: `ordered ${size} ${i}` })));
      // The physical order of a fresh table's rows is the order the statement inserted them in.
      const { rows: written } = await pool.query(`SELECT encode(sha256, 'hex') AS h FROM blob_rows WHERE database_id = $1 ORDER BY ctid`, [id]);
      const hashes = written.map((r: { h: string }) => r.h);
      expect(hashes).toHaveLength(size);
      expect(hashes).toEqual([...hashes].sort());
    }
    // Batches of different sizes sharing blobs (a graph many memories share), at once, new blobs every round.
    for (let round = 0; round < 8; round++) {
      const id = db();
      const shared = Array.from({ length: 30 }, (_, i) => ({ databaseId: id, bytes: `shared ${round} ${i}` }));
      const own = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ databaseId: id, bytes: `${tag} ${round} ${i}` }));
      const outcomes = await Promise.all([store.putMany([...shared, ...own(120, 'a')]), store.putMany([...own(10, 'b'), ...shared]), store.putMany(shared.slice(0, 25))]);
      expect(outcomes.flat().filter((o) => 'error' in o)).toEqual([]);
    }
  });

  it('deletes one row, and a database: its rows and directory go, and later writes of it are refused here and in other processes', async () => {
    const store = new BlobStore(root, { cacheBytes: 0, rows });
    const id = db();
    const gone = await store.put(id, 'short-lived');
    await store.delete(id, gone);
    expect(await store.has(id, gone)).toBe(false);
    await store.put(id, 'a row');
    await store.put(id, 'F'.repeat(5000));
    expect(await rows.count(id)).toBe(1);
    const other = db();
    await store.put(other, 'another database');
    await store.deleteDatabase(id);
    expect(await rows.count(id)).toBe(0);
    expect(existsSync(join(root, id))).toBe(false);
    expect(await rows.count(other)).toBe(1);
    await expect(store.put(id, 'a chunk list written too late')).rejects.toBeInstanceOf(DatabaseBlobsDeletedError);
    // Another process: neither the in-process set nor a directory to make; the rows' deleted record refuses it.
    await expect(new BlobStore(mkdtempSync(join(tmpdir(), 'blobs-')), { rows }).put(id, 'from elsewhere')).rejects.toBeInstanceOf(DatabaseBlobsDeletedError);
    expect(await rows.count(id)).toBe(0);
  });

  it('a deletion waits for an insert already running, and removes its row', async () => {
    const id = db();
    const holder = await pool.connect();
    try {
      // An insert whose transaction is still open when the deletion starts (a put in flight in another process).
      await holder.query('BEGIN');
      await holder.query(`INSERT INTO blob_rows (database_id, sha256, bytes) VALUES ($1, $2, 'x')`, [id, Buffer.alloc(32, 1)]);
      const deleting = rows.deleteDatabase(id);
      await new Promise((r) => setTimeout(r, 200));
      await holder.query('COMMIT');
      await deleting;
    } finally {
      holder.release();
    }
    expect(await rows.count(id)).toBe(0);
  });

  it('a sweep removes a row older than the grace period, spares one stored or renewed within it, and reports what it did', async () => {
    const store = new BlobStore(root, { cacheBytes: 0, rows });
    const id = db();
    const old = await store.put(id, 'old');
    const renewed = await store.put(id, 'renewed');
    await pool.query(`UPDATE blob_rows SET touched_at = now() - interval '1 hour' WHERE database_id = $1`, [id]);
    await store.put(id, 'renewed'); // stored again: its time is renewed
    expect(await store.sweep(id, old, 60_000)).toBe(true);
    expect(await store.sweep(id, renewed, 60_000)).toBe(false);
    expect([await store.has(id, old), await store.has(id, renewed)]).toEqual([false, true]);
    expect(await rows.sweep(id, old, 60_000)).toBe('absent');
    expect(await rows.sweep(id, renewed, 0)).toBe('removed');
  });
});

describe('BlobStore cache memory', () => {
  it('holds each cached blob in memory of its own, not a slice of a shared slab it would keep alive', async () => {
    const root = mkdtempSync(join(tmpdir(), 'blobs-'));
    try {
      const store = new BlobStore(root);
      const small = Buffer.from('a small blob, allocated from the shared pool');
      expect(small.buffer.byteLength).toBeGreaterThan(small.length); // the premise: a pooled slice
      const sha = await store.put(DB, small);
      unlinkSync(store.path(DB, sha));
      const cached = await store.get(DB, sha); // answered from the cache
      expect(cached.toString()).toBe(small.toString());
      expect(cached.buffer.byteLength).toBe(cached.length);
      expect(store.cacheUsage()).toEqual({ bytes: small.length + store.path(DB, sha).length + CACHE_ENTRY_OVERHEAD, entries: 1 });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
