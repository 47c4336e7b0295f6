import { mkdir, access } from 'node:fs/promises';
import type { DataSource } from 'typeorm';
import type { DatabaseComponent, EmbedderSpec } from '../../../libs/domain/src/events';
import type { BlobStore } from '../../../libs/persistence/src/blob-store';

/**
 * The physical parts of a database outside the event log. Each contributor provisions what it owns and
 * purges it on deletion; `provision` returns only once the part really exists.
 */
export interface ResourceContributor {
  provision?(databaseId: string, component: DatabaseComponent, embedder: EmbedderSpec): Promise<Record<string, unknown> | void>;
  purgeDatabase?(databaseId: string): Promise<void>;
  purgeCollection?(databaseId: string, collection: string): Promise<void>;
  /** Event streams holding this database's (or collection's) content, deleted with it. */
  streamsOf?(databaseId: string, collection?: string): Promise<string[]>;
}

export class DatabaseResources {
  constructor(private readonly contributors: ResourceContributor[]) {}

  add(contributor: ResourceContributor): void {
    this.contributors.push(contributor);
  }

  async provision(databaseId: string, component: DatabaseComponent, embedder: EmbedderSpec): Promise<Record<string, unknown>> {
    const detail: Record<string, unknown> = {};
    for (const c of this.contributors) Object.assign(detail, (await c.provision?.(databaseId, component, embedder)) ?? {});
    return detail;
  }

  async purgeDatabase(databaseId: string): Promise<void> {
    for (const c of this.contributors) await c.purgeDatabase?.(databaseId);
  }

  async purgeCollection(databaseId: string, collection: string): Promise<void> {
    for (const c of this.contributors) await c.purgeCollection?.(databaseId, collection);
  }

  async streamsOf(databaseId: string, collection?: string): Promise<string[]> {
    const all = new Set<string>();
    for (const c of this.contributors) for (const s of (await c.streamsOf?.(databaseId, collection)) ?? []) all.add(s);
    return [...all];
  }
}

/**
 * Per-database blob directory (content-addressed payloads); the scheduler component owns it. The directory comes from
 * the blob store itself: until 2026-11-25 this contributor joined its own path (`blobs/blobs/<id>`), so deleting a
 * database removed an empty directory and left every blob on disk.
 */
export class BlobDirectoryContributor implements ResourceContributor {
  constructor(private readonly blobs: BlobStore) {}

  async provision(databaseId: string, component: DatabaseComponent) {
    if (component !== 'scheduler') return;
    await mkdir(this.blobs.databaseDir(databaseId), { recursive: true });
    await access(this.blobs.databaseDir(databaseId));
    return { blob_dir: true };
  }

  async purgeDatabase(databaseId: string) {
    await this.blobs.deleteDatabase(databaseId);
  }
}

/** The graph component is ready when every graph read-model table exists in Postgres. */
export class GraphTablesContributor implements ResourceContributor {
  constructor(private readonly ds: DataSource, private readonly tables: string[]) {}

  async provision(_databaseId: string, component: DatabaseComponent) {
    if (component !== 'graph') return;
    for (const t of this.tables) {
      const [row] = await this.ds.query('SELECT to_regclass($1) AS oid', [t]);
      if (!row.oid) throw new Error(`graph table ${t} does not exist yet`);
    }
    return { graph_tables: this.tables.length };
  }
}
