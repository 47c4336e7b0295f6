import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobStore, DatabaseBlobsDeletedError } from './blob-store';

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
    const store = new BlobStore(root, { cacheBytes: 80 });
    const a = await store.put(DB, 'a'.repeat(10));
    const b = await store.put(DB, 'b'.repeat(10));
    await store.get(DB, a); // a is now the most recent
    for (let i = 0; i < 7; i++) await store.put(DB, `${i}`.repeat(10)); // 90 bytes in all: the oldest (b) goes
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
