import type { DataSource } from 'typeorm';
import { lockKey } from '@crs/persistence/projection-runner';
import type { SearchIndex, Store } from '@crs/search/search-index.port';
import type { DatabaseComponent, EmbedderSpec } from '@crs/domain/events';
import type { ResourceContributor } from '@crs/persistence/database-resources';
import { recordIndexModelsFromDatabases } from '@crs/projections/databases/databases.queries';

/**
 * Which physical search index serves each (database, store). Not a projection: operational state, like the
 * engine's own files. A rebuild fills a new generation and swaps the pointer here, then drops the old index.
 */
export const SEARCH_CATALOG_DDL = `CREATE TABLE IF NOT EXISTS search_indexes (
  database_id uuid NOT NULL,
  store text NOT NULL,
  index_name text NOT NULL,
  generation integer NOT NULL,
  dimensions integer NOT NULL,
  PRIMARY KEY (database_id, store)
)`;

/**
 * The vector space each index holds. Null: registered before it was recorded and not filled in at start (its length
 * is not its database's embedder's); taken for the configured model when the length fits, and rebuilt by a re-embed.
 */
export const SEARCH_CATALOG_MODEL_DDL = 'ALTER TABLE search_indexes ADD COLUMN IF NOT EXISTS model_id text';

/** A live index and the vector space its chunks hold. */
export interface IndexRef {
  name: string;
  /** null for an index registered before the catalog recorded models */
  modelId: string | null;
  dimensions: number;
}

export interface CatalogEntry {
  databaseId: string;
  store: Store;
  indexName: string;
  generation: number;
  dimensions: number;
  modelId: string | null;
}

export const indexNameFor = (databaseId: string, store: Store, generation: number) => `${store === 'memory' ? 'm' : 'k'}_${databaseId.replace(/-/g, '')}_g${generation}`;

/** The throw-away copy `verify search-index` builds beside a live index (dropped at its end, and with the generation). */
export const verifyIndexName = (indexName: string) => `${indexName}_verify`;

/** How long a process trusts its cached index pointer. */
export const CATALOG_CACHE_MS = 1000;

export class SearchCatalog implements ResourceContributor {
  private readonly cache = new Map<string, { ref: IndexRef; at: number }>();

  constructor(private readonly ds: DataSource, readonly index: SearchIndex) {}

  async init(): Promise<void> {
    await this.ds.query(SEARCH_CATALOG_DDL);
    await this.ds.query(SEARCH_CATALOG_MODEL_DDL);
    // Indexes registered before models were recorded hold their database's embedder (when its length fits: an index
    // a re-embed that recorded the change before rebuilding left behind when killed holds the earlier one, and stays
    // unrecorded until re-embedded).
    await recordIndexModelsFromDatabases(this.ds).catch(() => undefined); // a new installation: no databases read model yet, nothing to fill
  }

  /**
   * Runs a whole-index operation (rebuild, re-embed, verify) as the only one, across processes: a session advisory lock
   * held for its whole run: two rebuilds at once would each drop the generation the other had just made live, leaving
   * no search index at all. A second one is refused at once, naming the reason.
   */
  async exclusively<T>(what: string, run: () => Promise<T>): Promise<T> {
    const session = this.ds.createQueryRunner();
    await session.connect();
    try {
      const [got] = await session.query('SELECT pg_try_advisory_lock($1) AS ok', [lockKey('search-index-maintenance')]);
      if (!got.ok) throw new Error(`another search-index rebuild, re-embed or verify is running (in this or another process); run ${what} once it has finished`);
      try {
        return await run();
      } finally {
        await session.query('SELECT pg_advisory_unlock($1)', [lockKey('search-index-maintenance')]);
      }
    } finally {
      await session.release();
    }
  }

  /** How far the live search-index processor has handled the log (its checkpoint; 0 before it ever ran). */
  async indexedTo(): Promise<number> {
    const [row] = await this.ds.query(`SELECT position FROM projection_checkpoints WHERE name = 'search-index'`).catch(() => []);
    return row ? Number(row.position) : 0;
  }

  /** The live index of a store, or null when the database has none (not provisioned, or deleted). */
  async indexName(databaseId: string, store: Store): Promise<string | null> {
    return (await this.entry(databaseId, store))?.name ?? null;
  }

  /** The live index of a store and the vector space it holds, or null when the database has none. */
  async entry(databaseId: string, store: Store): Promise<IndexRef | null> {
    const key = `${databaseId}/${store}`;
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < CATALOG_CACHE_MS) return hit.ref;
    const [row] = await this.ds.query('SELECT index_name, model_id, dimensions FROM search_indexes WHERE database_id = $1 AND store = $2', [databaseId, store]);
    if (!row) {
      this.cache.delete(key);
      return null;
    }
    const ref: IndexRef = { name: row.index_name, modelId: row.model_id ?? null, dimensions: row.dimensions };
    this.cache.set(key, { ref, at: Date.now() });
    return ref;
  }

  async all(): Promise<CatalogEntry[]> {
    const rows = await this.ds.query('SELECT * FROM search_indexes ORDER BY database_id, store');
    return rows.map((r: any) => ({ databaseId: r.database_id, store: r.store, indexName: r.index_name, generation: r.generation, dimensions: r.dimensions, modelId: r.model_id ?? null }));
  }

  /**
   * A rebuild's swap: points the store at its new generation only if the catalog still holds the generation the rebuild
   * started from. False when the database was deleted (or rebuilt by someone else) meanwhile: the caller drops its new
   * index instead, so a rebuild never registers a deleted database's index again.
   */
  async replaceGeneration(databaseId: string, store: Store, indexName: string, generation: number, space: { dimensions: number; modelId: string | null }, from: number): Promise<boolean> {
    // TypeORM answers an UPDATE with [rows, count].
    const [rows] = (await this.ds.query(
      'UPDATE search_indexes SET index_name = $3, generation = $4, dimensions = $5, model_id = $7 WHERE database_id = $1 AND store = $2 AND generation = $6 RETURNING 1',
      [databaseId, store, indexName, generation, space.dimensions, from, space.modelId],
    )) as [unknown[], number];
    this.cache.clear();
    return rows.length > 0;
  }

  async swap(databaseId: string, store: Store, indexName: string, generation: number, space: EmbedderSpec): Promise<string | null> {
    const [old] = await this.ds.query('SELECT index_name FROM search_indexes WHERE database_id = $1 AND store = $2', [databaseId, store]);
    await this.ds.query(
      `INSERT INTO search_indexes (database_id, store, index_name, generation, dimensions, model_id) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (database_id, store) DO UPDATE SET index_name = EXCLUDED.index_name, generation = EXCLUDED.generation, dimensions = EXCLUDED.dimensions, model_id = EXCLUDED.model_id`,
      [databaseId, store, indexName, generation, space.dimensions, space.modelId],
    );
    this.cache.clear();
    return old && old.index_name !== indexName ? old.index_name : null;
  }

  /** vectorstore.knowledge / vectorstore.memories: the index exists in the engine and is registered. */
  async provision(databaseId: string, component: DatabaseComponent, embedder: EmbedderSpec) {
    const store: Store | null = component === 'vectorstore.knowledge' ? 'knowledge' : component === 'vectorstore.memories' ? 'memory' : null;
    if (!store) return;
    const existing = await this.indexName(databaseId, store);
    const name = existing ?? indexNameFor(databaseId, store, 1);
    await this.index.createIndex(name, { dimensions: embedder.dimensions });
    if (!(await this.index.indexExists(name))) throw new Error(`search index ${name} was not created`);
    if (!existing) await this.swap(databaseId, store, name, 1, embedder);
    return { [`${store}_index`]: name, engine: this.index.engine };
  }

  /**
   * The generations of a database's store from `from` up to (not including) `below`. A rebuild builds the next
   * generation and, killed before its end, leaves either the new one or the old one behind; every later rebuild drops
   * the one two below the live one, so a short window is enough and the cost does not grow with the generation count.
   * dropIndex is idempotent.
   */
  async dropGenerations(databaseId: string, store: Store, from: number, below: number): Promise<void> {
    for (let g = Math.max(1, from); g < below; g++) {
      await this.index.dropIndex(indexNameFor(databaseId, store, g));
      await this.index.dropIndex(verifyIndexName(indexNameFor(databaseId, store, g))); // left by a killed verify
    }
  }

  async purgeDatabase(databaseId: string): Promise<void> {
    const live: { store: Store; generation: number }[] = await this.ds.query('SELECT store, generation FROM search_indexes WHERE database_id = $1', [databaseId]);
    for (const { store, generation } of live) await this.dropGenerations(databaseId, store, generation - 2, generation + 2);
    await this.ds.query('DELETE FROM search_indexes WHERE database_id = $1', [databaseId]);
    this.cache.clear();
  }

  async purgeCollection(databaseId: string, collection: string): Promise<void> {
    for (const store of ['knowledge', 'memory'] as Store[]) {
      const name = await this.indexName(databaseId, store);
      if (name) await this.index.deleteWhere(name, { collections: [collection] });
    }
  }
}
