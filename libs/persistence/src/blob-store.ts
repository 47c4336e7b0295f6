import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Content-addressed blobs per database: `<root>/<databaseId>/<sha[0:2]>/<sha256>`. Large payloads (files,
 * memory text, chunk lists) live here and events carry only the hash. A database's directory is removed with it.
 * Production points `root` at a shared volume; the same layout maps onto a bucket.
 */
export class BlobStore {
  constructor(private readonly root: string) {}

  path(databaseId: string, sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`invalid blob hash ${sha256}`);
    return join(this.root, databaseId, sha256.slice(0, 2), sha256);
  }

  static hash(bytes: Buffer | string): string {
    return createHash('sha256').update(bytes).digest('hex');
  }

  /** Stores bytes (atomically: temp file then rename) and returns their sha256; storing the same bytes again is free. */
  async put(databaseId: string, bytes: Buffer | string): Promise<string> {
    const sha = BlobStore.hash(bytes);
    const target = this.path(databaseId, sha);
    try {
      await stat(target);
      return sha;
    } catch {
      /* not stored yet */
    }
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, bytes);
    await rename(tmp, target);
    return sha;
  }

  async get(databaseId: string, sha256: string): Promise<Buffer> {
    return readFile(this.path(databaseId, sha256));
  }

  async delete(databaseId: string, sha256: string): Promise<void> {
    await rm(this.path(databaseId, sha256), { force: true });
  }

  async deleteDatabase(databaseId: string): Promise<void> {
    await rm(join(this.root, databaseId), { recursive: true, force: true });
  }
}
