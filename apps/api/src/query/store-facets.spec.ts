import { StepClock } from '@crs/domain/step-clock';
import { configFromEnv } from '@crs/config';
import type { DataSource } from 'typeorm';
import type { Embedder } from '@crs/embeddings';
import type { SearchCatalog } from '@crs/projections/search-index/search-catalog';
import type { ItemCheckRow, StoreFacets } from '@crs/projections/items/items.queries';
import type { LeanCandidate, SearchFilter, SearchIndex, Store } from '@crs/search/search-index.port';
import type { BlobStore } from '@crs/persistence/blob-store';
import { RetrievalService } from './retrieval.service';
import { StoreFacetCache, withoutVacuousClauses } from './store-facets';

const NOW = 1_800_000_000_000;
const asked: SearchFilter = { collections: ['default'], now: NOW, includeApps: true, principalsAny: ['u1'] };

describe('withoutVacuousClauses', () => {
  it('leaves the collection clause out when every collection holding items in the store is asked for', () => {
    expect(withoutVacuousClauses(asked, { collections: ['default'], expiring: true })).toEqual({ ...asked, collections: undefined });
    expect(withoutVacuousClauses({ ...asked, collections: ['a', 'b'] }, { collections: ['b'], expiring: true }).collections).toBeUndefined();
    // an empty store: nothing to keep out
    expect(withoutVacuousClauses(asked, { collections: [], expiring: true }).collections).toBeUndefined();
  });

  it('keeps the collection clause when the store holds items of a collection not asked for', () => {
    expect(withoutVacuousClauses(asked, { collections: ['default', 'user-42'], expiring: true }).collections).toEqual(['default']);
  });

  it('leaves the expiry clause out only when no item of the store expires', () => {
    expect(withoutVacuousClauses(asked, { collections: ['x'], expiring: false }).now).toBeUndefined();
    expect(withoutVacuousClauses(asked, { collections: ['x'], expiring: true }).now).toBe(NOW);
  });

  it('never touches the other clauses, and changes nothing without facets', () => {
    const narrowed = withoutVacuousClauses({ ...asked, metadata: { team: 'red' } }, { collections: ['default'], expiring: false });
    expect(narrowed).toEqual({ includeApps: true, principalsAny: ['u1'], metadata: { team: 'red' }, collections: undefined, now: undefined });
    expect(withoutVacuousClauses(asked, undefined)).toBe(asked);
  });
});

describe('StoreFacetCache', () => {
  const facets = (n: number) => new Map<Store, StoreFacets>([['memory', { collections: [`c${n}`], expiring: false }]]);

  it('reads a database once per time-to-live, and again after it', async () => {
    let reads = 0;
    const cache = new StoreFacetCache(async () => facets(++reads), 40);
    expect((await cache.of('db1')).get('memory')!.collections).toEqual(['c1']);
    expect((await cache.of('db1')).get('memory')!.collections).toEqual(['c1']);
    expect(reads).toBe(1);
    await new Promise((r) => setTimeout(r, 60));
    expect((await cache.of('db1')).get('memory')!.collections).toEqual(['c2']);
    expect(reads).toBe(2);
  });

  it('holds at most its bound of databases, the ones read longest ago going first', async () => {
    const reads: string[] = [];
    const cache = new StoreFacetCache(async (db) => (reads.push(db), facets(1)), 60_000, 3);
    for (const db of ['a', 'b', 'c', 'd', 'e']) await cache.of(db);
    expect(cache.size).toBe(3);
    await cache.of('e');
    await cache.of('a');
    expect(reads).toEqual(['a', 'b', 'c', 'd', 'e', 'a']);
  });

  it('does not keep a failed read', async () => {
    let reads = 0;
    const cache = new StoreFacetCache(async () => (++reads === 1 ? Promise.reject(new Error('down')) : facets(reads)), 60_000);
    await expect(cache.of('db1')).rejects.toThrow('down');
    expect(cache.size).toBe(0);
    expect((await cache.of('db1')).get('memory')!.collections).toEqual(['c2']);
  });
});

describe('retrieval with the vacuous clauses left out', () => {
  /** An engine that ignores every filter, as one answering without the left-out clauses does for stale facets. */
  const chunk = (itemId: string): LeanCandidate => ({ chunkId: `${itemId}:0`, itemId, score: 1, doc: { chunkId: `${itemId}:0`, itemId, version: 5, text: `text of ${itemId}` } as LeanCandidate['doc'] });
  const row = (itemKey: string, collection: string, expiresAt: Date | null = null): ItemCheckRow =>
    ({
      database_id: 'db', item_key: itemKey, item_id: itemKey, collection, store: 'memory', kind: 'memory', source_type: 'memory', title: null, filename: null,
      metadata: {}, additional_metadata: {}, acl: null, app_kind: null, app_provider: null, relations: [], status: 'completed', expires_at: expiresAt,
      created_at: new Date(0), updated_at: new Date(0), chunked_position: '5', synced_source: null,
    }) as ItemCheckRow;

  it('holds hits to the collections asked for and drops expired ones on the read model, whatever the engine returns', async () => {
    const filters: SearchFilter[] = [];
    const index = {
      keywordSearch: async (_i: string, _q: string, o: { filter: SearchFilter }) => (filters.push(o.filter), [chunk('mine'), chunk('other'), chunk('gone')]),
      vectorSearch: async (_i: string, _v: unknown, o: { filter: SearchFilter }) => (filters.push(o.filter), [chunk('mine'), chunk('other'), chunk('gone')]),
    };
    const embedder = { embed: async (texts: string[]) => texts.map(() => Float32Array.from([1, 0])) } as unknown as Embedder;
    const catalog = { entry: async () => ({ name: 'idx', modelId: null, dimensions: 2 }) } as unknown as SearchCatalog;
    // No context lending here: the neighbours query needs Postgres.
    const config = configFromEnv({ RETRIEVAL_CONTEXT_AFTER: '0', RETRIEVAL_CONTEXT_BEFORE: '0' }, 'postgres://spec');
    const service = new RetrievalService(undefined as unknown as DataSource, embedder, catalog, index as unknown as SearchIndex, undefined as unknown as BlobStore, new StepClock(), config);
    // Facets a moment old: they know only the collection asked for and no expiring item.
    jest.spyOn(service.facets, 'of').mockResolvedValue(new Map([['memory', { collections: ['default'], expiring: false }]]));
    const rows = new Map([
      ['mine', row('mine', 'default')],
      ['other', row('other', 'user-42')],
      ['gone', row('gone', 'default', new Date(Date.now() - 1000))],
    ]);
    jest.spyOn(service, 'items').mockImplementation(async (_db, keys) => new Map(keys.filter((k) => rows.has(k)).map((k) => [k, rows.get(k)!])));

    const ranked = await service.retrieve({ databaseId: 'db', collections: ['default'], stores: ['memory'], query: 'q', vectorText: 'q', limit: 10, alpha: 0.5, caller: null, includeApps: true, recencyBias: 0 });

    expect(filters).toHaveLength(2);
    for (const f of filters) {
      expect(f.collections).toBeUndefined();
      expect(f.now).toBeUndefined();
    }
    expect(ranked.map((r) => r.item.item_key)).toEqual(['mine']);
  });
});
