import { decideDatabase, decideRegistry, evolveDatabase, evolveRegistry, initialDatabase, initialRegistry } from './database.decider';
import type { DatabaseEvent } from './events';

const given = (events: DatabaseEvent[]) => events.reduce(evolveRegistry, initialRegistry());
const embedder = { modelId: 'm', dimensions: 4 };

describe('database registry decider', () => {
  it('creates a database whose name is free', () => {
    expect(decideRegistry({ type: 'CreateDatabase', databaseId: 'id1', name: 'a', metadataSchema: [], embedder }, given([]))).toEqual([
      { type: 'DatabaseCreated', data: { databaseId: 'id1', name: 'a', metadataSchema: [], embedder } },
    ]);
  });
  it('refuses a name in use, and one being deleted with its own code', () => {
    const created: DatabaseEvent = { type: 'DatabaseCreated', data: { databaseId: 'id1', name: 'a', metadataSchema: [], embedder } };
    expect(() => decideRegistry({ type: 'CreateDatabase', databaseId: 'id2', name: 'a', metadataSchema: [], embedder }, given([created]))).toThrow(expect.objectContaining({ code: 'DATABASE_EXISTS' }));
    const deleting = given([created, { type: 'DatabaseDeletionRequested', data: { databaseId: 'id1', name: 'a' } }]);
    expect(() => decideRegistry({ type: 'CreateDatabase', databaseId: 'id2', name: 'a', metadataSchema: [], embedder }, deleting)).toThrow(expect.objectContaining({ code: 'DATABASE_DELETING' }));
  });
  it('frees the name once deleted; deletion requests are idempotent', () => {
    const created: DatabaseEvent = { type: 'DatabaseCreated', data: { databaseId: 'id1', name: 'a', metadataSchema: [], embedder } };
    const requested: DatabaseEvent = { type: 'DatabaseDeletionRequested', data: { databaseId: 'id1', name: 'a' } };
    expect(decideRegistry({ type: 'RequestDatabaseDeletion', name: 'a' }, given([created, requested]))).toEqual([]);
    const deleted: DatabaseEvent = { type: 'DatabaseDeleted', data: { databaseId: 'id1', name: 'a', requestedBy: 'k', requestedAt: 't', streamsDeleted: 1, itemsDeleted: 0 } };
    expect(decideRegistry({ type: 'CreateDatabase', databaseId: 'id2', name: 'a', metadataSchema: [], embedder }, given([created, requested, deleted]))).toHaveLength(1);
    expect(() => decideRegistry({ type: 'RequestDatabaseDeletion', name: 'zzz' }, given([]))).toThrow(expect.objectContaining({ code: 'DATABASE_NOT_FOUND' }));
  });
});

describe('database decider', () => {
  it('marks each component once', () => {
    const s = [{ type: 'DatabaseComponentProvisioned', data: { databaseId: 'd', component: 'graph' } } as DatabaseEvent].reduce(evolveDatabase, initialDatabase());
    expect(decideDatabase({ type: 'MarkProvisioned', databaseId: 'd', component: 'graph' }, s)).toEqual([]);
    expect(decideDatabase({ type: 'MarkProvisioned', databaseId: 'd', component: 'scheduler' }, s)).toHaveLength(1);
  });
  it('creates a collection implicitly once, refuses one being deleted', () => {
    const s0 = initialDatabase();
    const [ev] = decideDatabase({ type: 'EnsureCollection', databaseId: 'd', collection: 'c' }, s0);
    expect(ev.type).toBe('CollectionCreated');
    const s1 = evolveDatabase(s0, ev);
    expect(decideDatabase({ type: 'EnsureCollection', databaseId: 'd', collection: 'c' }, s1)).toEqual([]);
    const s2 = evolveDatabase(s1, { type: 'CollectionDeletionRequested', data: { databaseId: 'd', collection: 'c' } });
    expect(() => decideDatabase({ type: 'EnsureCollection', databaseId: 'd', collection: 'c' }, s2)).toThrow(expect.objectContaining({ code: 'COLLECTION_DELETING' }));
  });
});
