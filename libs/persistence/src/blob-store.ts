import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { BlobRows } from './blob-rows';

/** Blob files `getMany` reads and `putMany` writes concurrently. */
const FILES_AT_ONCE = 8;

export interface BlobStoreOptions {
  /**
   * Bytes of recently stored or read blobs kept in memory (least recently used dropped first), counting each entry's
   * bookkeeping (CACHE_ENTRY_OVERHEAD). Default 64 MiB (the service sets BLOB_CACHE_MB, default 16);
   * 0 disables. Blobs are immutable (named by their hash), so a cached copy is never stale; a blob whose
   * database was deleted is dropped from the cache with it.
   */
  cacheBytes?: number;
  /** Blobs from this size up are looked for on disk before being written (default 64 KiB); smaller ones are written again. */
  statFromBytes?: number;
  /**
   * Blobs below this size (default 64 KiB) are written with synchronous calls on the calling thread. Each async file
   * call is a round trip through libuv's thread pool, whose wake-ups cost more than the small write itself (on this
   * VM, ~90 µs of main-thread time per call, four calls per blob: open, write, close, rename); a small write to the
   * page cache blocks the event loop for tens of microseconds.
   */
  syncBelowBytes?: number;
  /** Where small blobs are stored as rows (BlobRows); without it every blob is a file. */
  rows?: BlobRows;
  /**
   * Blobs of at most this many bytes are written to `rows` (default 4096: a file costs a 4 KiB block whatever its
   * size); 0 writes every blob as a file. Reads look in `rows` whatever this is.
   */
  rowMaxBytes?: number;
}

/**
 * Content-addressed blobs per database: payloads (files, memory text, chunk lists, graphs) live here and events carry
 * only the hash. Blobs up to `rowMaxBytes` are rows of a Postgres table (BlobRows), larger ones files under
 * `<root>/<databaseId>/<sha[0:2]>/<sha256>`; reads look in both, so a blob stored either way is found whatever the
 * setting is now. A database's rows and directory are removed with it. Production points `root` at a shared volume;
 * the same layout maps onto a bucket.
 *
 * In one process a blob is typically written by one step and read back by the next (ingest → pipeline,
 * pipeline → search index and graph projection): the in-memory cache answers those reads, so a memory's way
 * through the pipeline costs a few file writes instead of ~30 file system calls.
 */
export class BlobStore {
  private readonly cache = new Map<string, Buffer>();
  /** Databases deleted in this process: a write for one (work still in flight when it went) is refused. */
  private readonly deleted = new Set<string>();
  private cached = 0;
  private readonly dirs = new Set<string>();
  private readonly cacheBytes: number;
  private readonly statFromBytes: number;
  private readonly syncBelowBytes: number;
  private temps = 0;
  private readonly rows?: BlobRows;
  private readonly rowMaxBytes: number;

  constructor(
    private readonly root: string,
    options: BlobStoreOptions = {},
  ) {
    this.cacheBytes = options.cacheBytes ?? 64 * 1024 * 1024;
    this.statFromBytes = options.statFromBytes ?? 64 * 1024;
    this.syncBelowBytes = options.syncBelowBytes ?? 64 * 1024;
    this.rows = options.rows;
    this.rowMaxBytes = options.rows ? (options.rowMaxBytes ?? 4096) : 0;
  }

  /** Bytes (each blob's own and its bookkeeping: CACHE_ENTRY_OVERHEAD) and blobs held by the in-memory cache (reported on /metrics). */
  cacheUsage(): { bytes: number; entries: number } {
    return { bytes: this.cached, entries: this.cache.size };
  }

  /** The directory holding one database's blobs. */
  databaseDir(databaseId: string): string {
    return join(this.root, databaseId);
  }

  /** Whether a string is a blob's address (a sha256 in lowercase hex): what `path` and every read accept. */
  static isAddress(sha256: string): boolean {
    return /^[0-9a-f]{64}$/.test(sha256);
  }

  path(databaseId: string, sha256: string): string {
    if (!BlobStore.isAddress(sha256)) throw new Error(`invalid blob hash ${sha256}`);
    return join(this.root, databaseId, sha256.slice(0, 2), sha256);
  }

  static hash(bytes: Buffer | string): string {
    return createHash('sha256').update(bytes).digest('hex');
  }

  /**
   * Stores bytes (atomically: temp file then rename) and returns their sha256; storing the same bytes again
   * is free when they are cached or large (found on disk), and otherwise rewrites an identical file.
   */
  async put(databaseId: string, bytes: Buffer | string): Promise<string> {
    if (this.deleted.has(databaseId)) throw new DatabaseBlobsDeletedError(databaseId);
    const buffer = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    const sha = BlobStore.hash(buffer);
    const target = this.path(databaseId, sha);
    if (this.rowMaxBytes > 0 && buffer.length <= this.rowMaxBytes) {
      // Also renews a stored row's time (what `sweep` spares), so it is written whether cached or not.
      if (!(await this.rows!.put(databaseId, sha, buffer))) {
        this.deleted.add(databaseId);
        throw new DatabaseBlobsDeletedError(databaseId);
      }
      this.remember(target, buffer);
      return sha;
    }
    // Stored already: its time is renewed, so a collection's deletion that finds no other reference yet (this
    // request's events are not appended) spares it (sweep). A file swept meanwhile is written again.
    if (this.cache.has(target) && renewed(target)) {
      this.remember(target, buffer);
      return sha;
    }
    if (buffer.length >= this.statFromBytes && renewed(target)) return sha;
    await this.writeAtomically(databaseId, dirname(target), target, buffer, buffer.length < this.syncBelowBytes ? SYNC_IO : ASYNC_IO);
    this.remember(target, buffer);
    return sha;
  }

  /**
   * `put` for several blobs: those stored as rows in one statement (one commit instead of one each), larger ones as
   * files, a few at a time. The outcome of each, in the order given: its sha256, or the error its `put` would have
   * thrown (DatabaseBlobsDeletedError for a deleted database).
   */
  async putMany(blobs: { databaseId: string; bytes: Buffer | string }[]): Promise<({ sha256: string } | { error: unknown })[]> {
    const entries = blobs.map((b) => {
      const buffer = typeof b.bytes === 'string' ? Buffer.from(b.bytes, 'utf8') : b.bytes;
      return { databaseId: b.databaseId, buffer, sha256: BlobStore.hash(buffer) };
    });
    const out: ({ sha256: string } | { error: unknown })[] = new Array(entries.length);
    const asRows: number[] = [];
    const asFiles: number[] = [];
    entries.forEach((e, i) => {
      if (this.deleted.has(e.databaseId)) out[i] = { error: new DatabaseBlobsDeletedError(e.databaseId) };
      else if (this.rowMaxBytes > 0 && e.buffer.length <= this.rowMaxBytes) asRows.push(i);
      else asFiles.push(i);
    });
    if (asRows.length) {
      try {
        const refused = await this.rows!.putMany(asRows.map((i) => ({ databaseId: entries[i].databaseId, sha256: entries[i].sha256, bytes: entries[i].buffer })));
        for (const i of asRows) {
          const e = entries[i];
          if (refused.has(e.databaseId.toLowerCase())) {
            this.deleted.add(e.databaseId);
            out[i] = { error: new DatabaseBlobsDeletedError(e.databaseId) };
          } else {
            this.remember(this.path(e.databaseId, e.sha256), e.buffer);
            out[i] = { sha256: e.sha256 };
          }
        }
      } catch (error) {
        for (const i of asRows) out[i] = { error };
      }
    }
    for (let start = 0; start < asFiles.length; start += FILES_AT_ONCE) {
      await Promise.all(
        asFiles.slice(start, start + FILES_AT_ONCE).map(async (i) => {
          try {
            out[i] = { sha256: await this.put(entries[i].databaseId, entries[i].buffer) };
          } catch (error) {
            out[i] = { error };
          }
        }),
      );
    }
    return out;
  }

  /** Unique per process (pid) and call: cheaper than random bytes, which took 2% of the ingest's main thread. */
  private tempName(target: string): string {
    return `${target}.${process.pid}-${++this.temps}.tmp`;
  }

  /** Temp file then rename, with either set of file calls (a small blob's are synchronous: see syncBelowBytes). */
  private async writeAtomically(databaseId: string, dir: string, target: string, buffer: Buffer, io: FileCalls): Promise<void> {
    if (!this.dirs.has(dir)) {
      this.refuseDeleted(databaseId);
      await io.mkdir(dir, { recursive: true });
      this.dirs.add(dir);
    }
    const tmp = this.tempName(target);
    try {
      await io.writeFile(tmp, buffer);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // The directory went away: its database deleted (by another process too: its marker says so), or removed by hand.
      this.dirs.delete(dir);
      this.refuseDeleted(databaseId);
      await io.mkdir(dir, { recursive: true });
      this.dirs.add(dir);
      await io.writeFile(tmp, buffer);
    }
    await io.rename(tmp, target);
  }

  async get(databaseId: string, sha256: string): Promise<Buffer> {
    const target = this.path(databaseId, sha256);
    const hit = this.cache.get(target);
    if (hit) {
      this.remember(target, hit);
      return hit;
    }
    const bytes = (await this.rows?.get(databaseId, sha256)) ?? (await readFile(target));
    this.remember(target, bytes);
    return bytes;
  }

  /**
   * Several blobs, in the order asked: the cached ones from memory, those stored as rows in one statement, the rest
   * from their files (a few at a time). A blob stored nowhere is null (a `get` would fail with ENOENT); any other
   * failure is thrown. What a replay reads per batch of events: one round trip instead of one per blob.
   */
  async getMany(keys: { databaseId: string; sha256: string }[]): Promise<(Buffer | null)[]> {
    const out: (Buffer | null)[] = keys.map((k) => {
      const target = this.path(k.databaseId, k.sha256);
      const hit = this.cache.get(target);
      if (hit) this.remember(target, hit);
      return hit ?? null;
    });
    // Keyed as BlobRows answers: the database id in Postgres's canonical (lowercase) form.
    const keyOf = (k: { databaseId: string; sha256: string }) => `${k.databaseId.toLowerCase()}/${k.sha256}`;
    const missing = new Map<string, { key: string; databaseId: string; sha256: string }>();
    keys.forEach((k, i) => {
      if (!out[i]) missing.set(keyOf(k), { key: keyOf(k), ...k });
    });
    const rows = (await this.rows?.getMany([...missing.values()])) ?? new Map<string, Buffer>();
    const files = [...missing.values()].filter((m) => !rows.has(m.key));
    for (let start = 0; start < files.length; start += FILES_AT_ONCE) {
      await Promise.all(
        files.slice(start, start + FILES_AT_ONCE).map(async (m) => {
          try {
            rows.set(m.key, await readFile(this.path(m.databaseId, m.sha256)));
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
          }
        }),
      );
    }
    return keys.map((k, i) => {
      if (out[i]) return out[i];
      const bytes = rows.get(keyOf(k));
      if (!bytes) return null;
      this.remember(this.path(k.databaseId, k.sha256), bytes);
      return bytes;
    });
  }

  /** Whether the blob is stored (as a row or a file), whatever the in-memory cache holds. */
  async has(databaseId: string, sha256: string): Promise<boolean> {
    return (await this.rows?.has(databaseId, sha256)) || existsSync(this.path(databaseId, sha256));
  }

  async delete(databaseId: string, sha256: string): Promise<void> {
    this.forget(this.path(databaseId, sha256));
    await this.rows?.delete(databaseId, sha256);
    await rm(this.path(databaseId, sha256), { force: true });
  }

  /**
   * Removes a database's rows and directory. Database ids are never reused, so a later write for it can only be work
   * that was in flight (the pipeline's chunk list of an item claimed before the deletion): it is refused, here and in
   * every other process (the marker file, the rows' deleted record), so no content of a deleted database is written
   * again.
   */
  async deleteDatabase(databaseId: string): Promise<void> {
    this.deleted.add(databaseId);
    // For the other processes on this volume (API-only ones, other workers): checked whenever one makes a directory.
    mkdirSync(join(this.root, DELETED_DIR), { recursive: true });
    writeFileSync(this.deletedMarker(databaseId), '');
    const prefix = this.databaseDir(databaseId);
    for (const key of [...this.cache.keys()]) if (key.startsWith(`${prefix}/`)) this.forget(key);
    for (const dir of [...this.dirs]) if (dir.startsWith(`${prefix}/`)) this.dirs.delete(dir);
    await this.rows?.deleteDatabase(databaseId);
    await rm(prefix, { recursive: true, force: true });
  }

  /**
   * Removes a blob a deleted collection alone referenced, unless it was written or renewed (`put`) within `graceMs`:
   * an ingest into another collection may have just stored the same bytes and not yet appended the events that
   * reference them. Returns false when it was spared. The file is moved aside first and its time read there, so a
   * `put` renewing it at that moment either finds it gone (and writes it again) or is seen (and it is put back).
   */
  async sweep(databaseId: string, sha256: string, graceMs: number, now = Date.now()): Promise<boolean> {
    const target = this.path(databaseId, sha256);
    if (this.rows && (await this.rows.sweep(databaseId, sha256, graceMs)) === 'spared') return false;
    const aside = `${target}.${process.pid}-${++this.temps}.swept`;
    try {
      await rename(target, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        this.forget(target);
        return true; // gone already
      }
      throw err;
    }
    if ((await stat(aside)).mtimeMs > now - graceMs) {
      await rename(aside, target);
      return false;
    }
    this.forget(target);
    await rm(aside, { force: true });
    return true;
  }

  private deletedMarker(databaseId: string): string {
    return join(this.root, DELETED_DIR, databaseId);
  }

  /** Before making a directory of a database: refused when it was deleted, here or by another process. */
  private refuseDeleted(databaseId: string): void {
    if (this.deleted.has(databaseId) || existsSync(this.deletedMarker(databaseId))) {
      this.deleted.add(databaseId);
      throw new DatabaseBlobsDeletedError(databaseId);
    }
  }

  /** Most recently used last (Map keeps insertion order). */
  private remember(key: string, bytes: Buffer): void {
    if (bytes.length > this.cacheBytes / 8) return; // a large file would push out many small blobs
    this.forget(key);
    this.cache.set(key, ownMemory(bytes));
    this.cached += entryCost(key, bytes);
    for (const [oldest, b] of this.cache) {
      if (this.cached <= this.cacheBytes) break;
      this.cache.delete(oldest);
      this.cached -= entryCost(oldest, b);
    }
  }

  private forget(key: string): void {
    const had = this.cache.get(key);
    if (!had) return;
    this.cache.delete(key);
    this.cached -= entryCost(key, had);
  }
}

/**
 * What one cached blob costs the process beyond its bytes: its key (a path), the Buffer and ArrayBuffer objects and the
 * map entry (measured in a heap snapshot: about 96 + 88 bytes of objects and 50 of map per entry, plus the key). Most
 * blobs are a few hundred bytes (a memory, its chunk list, its graph), so counting only their bytes held twice the
 * budget.
 */
export const CACHE_ENTRY_OVERHEAD = 256;
const entryCost = (key: string, bytes: Buffer) => bytes.length + key.length + CACHE_ENTRY_OVERHEAD;

/**
 * The bytes in memory of their own. Node hands out small Buffers (from strings, from Postgres rows) as slices of a
 * shared 8 KiB slab, and a cached slice keeps its whole slab alive: the cache's byte budget would then bound what it
 * counts, not what it holds.
 */
function ownMemory(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}

/** The file calls a blob write makes; awaiting a synchronous call's result adds no thread-pool round trip. */
interface FileCalls {
  mkdir(path: string, options: { recursive: true }): unknown;
  writeFile(path: string, data: Buffer): unknown;
  rename(from: string, to: string): unknown;
}
const SYNC_IO: FileCalls = { mkdir: mkdirSync, writeFile: writeFileSync, rename: renameSync };
const ASYNC_IO: FileCalls = { mkdir, writeFile, rename };

/** Renews a stored blob's time (what `sweep` spares); false when the file is not there. */
function renewed(path: string): boolean {
  try {
    const now = new Date();
    utimesSync(path, now, now);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    // A file another user's process wrote (a shared volume): there, but its time stays (a sweep may take it sooner).
    if (code === 'EPERM' || code === 'EACCES') return true;
    throw err;
  }
}

/** Where deleted databases leave an empty marker file each (database ids are never reused). */
const DELETED_DIR = '.deleted';

/** A write for a deleted database. */
export class DatabaseBlobsDeletedError extends Error {
  constructor(readonly databaseId: string) {
    super(`database ${databaseId} was deleted: its blobs are not written again`);
    this.name = 'DatabaseBlobsDeletedError';
  }
}
