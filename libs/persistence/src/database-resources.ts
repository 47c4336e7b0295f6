import type { DatabaseComponent, EmbedderSpec } from '@crs/domain/events';

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
