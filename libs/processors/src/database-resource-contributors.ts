import { mkdir, access } from 'node:fs/promises';
import type { DataSource } from 'typeorm';
import type { DatabaseComponent } from '@crs/domain/events';
import { streams } from '@crs/domain/streams';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { ResourceContributor } from '@crs/persistence/database-resources';
import { blobsOnlyIn, referencedBlobs } from '@crs/projections/blob-refs/blob-refs.queries';
import { feedbackIdsOf } from '@crs/projections/feedback/feedback.queries';
import { liveAndDeletedItemKeys } from '@crs/projections/item-tombstones/item-tombstones.queries';
import { requestIdsOf } from '@crs/projections/queries/queries.queries';

/** How recently stored or renewed a blob must be for a collection's deletion to spare it (for now). */
export const BLOB_SWEEP_GRACE_MS = 60_000;

/**
 * Per-database blob directory (content-addressed payloads); the scheduler component owns it. The directory comes from
 * the blob store itself, never from a path joined here, so deleting a database removes the directory that holds its
 * blobs.
 */
export class BlobDirectoryContributor implements ResourceContributor {
  constructor(
    private readonly blobs: BlobStore,
    /** Where the blob-refs read model lives; without it a collection's deletion leaves its blobs (tools, tests). */
    private readonly ds?: DataSource,
    /** A blob stored or renewed this recently is spared and looked at again this much later (BlobStore.sweep). */
    private readonly graceMs = BLOB_SWEEP_GRACE_MS,
  ) {}

  /**
   * Removes the blobs only this collection's items referenced (the blob-refs read model has seen the deletion request:
   * the lifecycle processor waits for it). One stored or renewed within the grace period may be about to be
   * referenced by an ingest into another collection: it is looked at again once the period is over, and removed if
   * still nobody references it (a process stopped meanwhile leaves it: docs/databases.md).
   */
  async purgeCollection(databaseId: string, collection: string) {
    if (!this.ds) return;
    const spared: string[] = [];
    for (const sha of await blobsOnlyIn(this.ds, databaseId, collection)) if (!(await this.blobs.sweep(databaseId, sha, this.graceMs))) spared.push(sha);
    if (spared.length) this.later(databaseId, spared, 1);
  }

  private later(databaseId: string, shas: string[], round: number): void {
    setTimeout(() => {
      void (async () => {
        const taken = await referencedBlobs(this.ds!, databaseId, shas);
        const again: string[] = [];
        for (const sha of shas.filter((x) => !taken.has(x))) if (!(await this.blobs.sweep(databaseId, sha, this.graceMs))) again.push(sha);
        if (again.length && round < 3) this.later(databaseId, again, round + 1);
      })().catch(() => undefined); // best effort: what stays is an unreferenced file, never a lost one
    }, this.graceMs + 100).unref();
  }

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

/** The item streams of a database (or one collection), live ones and those of items deleted one by one: deleted with it. */
export function itemStreams(ds: DataSource): ResourceContributor {
  return {
    streamsOf: async (databaseId, collection) => {
      const rows = await liveAndDeletedItemKeys(ds, databaseId, collection);
      return rows.map((r) => streams.item(databaseId, r.item_key));
    },
  };
}

/**
 * A database's recorded queries (their text and the ids they returned): deleted with it. A collection's deletion takes
 * the queries asked of that collection alone; one that spanned others (or every collection) stays (docs/databases.md).
 */
export function queryStreams(ds: DataSource): ResourceContributor {
  return {
    streamsOf: async (databaseId, collection) => {
      const rows = await requestIdsOf(ds, databaseId, collection);
      return rows.map((r) => streams.query(databaseId, r.request_id));
    },
  };
}

/** Feedback streams about a database (or one of its collections): deleted with it. */
export function feedbackStreams(ds: DataSource): ResourceContributor {
  return {
    streamsOf: async (databaseId, collection) => {
      const rows = await feedbackIdsOf(ds, databaseId, collection);
      return rows.map((r) => streams.feedback(r.feedback_id));
    },
  };
}
