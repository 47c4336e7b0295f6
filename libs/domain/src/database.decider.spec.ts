import { deciderSpec } from '@crs/test/support/decider-spec';
import { decideDatabase, decideRegistry, evolveDatabase, evolveRegistry, initialDatabase, initialRegistry } from './database.decider';
import type { DatabaseEvent } from './events';
import type { MetadataField } from './metadata-schema';

const embedder = { modelId: 'm', dimensions: 4 };
const schema: MetadataField[] = [{ name: 'team', type: 'string', nullable: true }];

describe('database registry decider', () => {
  const given = deciderSpec({ decide: decideRegistry, evolve: evolveRegistry, initialState: initialRegistry });
  const created = (databaseId: string, name: string): DatabaseEvent => ({ type: 'DatabaseCreated', data: { databaseId, name, metadataSchema: [], embedder } });
  const requested = (databaseId: string, name: string): DatabaseEvent => ({ type: 'DatabaseDeletionRequested', data: { databaseId, name } });
  const deleted = (databaseId: string, name: string): DatabaseEvent => ({
    type: 'DatabaseDeleted',
    data: { databaseId, name, requestedBy: 'k', requestedAt: 't', streamsDeleted: 1, itemsDeleted: 0 },
  });
  const create = (databaseId: string, name: string) => ({ type: 'CreateDatabase' as const, databaseId, name, metadataSchema: schema, embedder });

  it('creates a database whose name is free, with its schema and embedder', () => {
    given([]).when(create('id1', 'a')).then([{ type: 'DatabaseCreated', data: { databaseId: 'id1', name: 'a', metadataSchema: schema, embedder } }]);
    given([created('id1', 'a')]).when(create('id2', 'b')).then([{ type: 'DatabaseCreated', data: { databaseId: 'id2', name: 'b', metadataSchema: schema, embedder } }]);
  });

  it('refuses a name in use', () => {
    given([created('id1', 'a')]).when(create('id2', 'a')).thenThrows('DATABASE_EXISTS', 'conflict');
  });

  it('refuses a name whose database is being deleted, with its own code', () => {
    given([created('id1', 'a'), requested('id1', 'a')]).when(create('id2', 'a')).thenThrows('DATABASE_DELETING', 'conflict');
  });

  it('frees the name once the database is deleted', () => {
    given([created('id1', 'a'), requested('id1', 'a'), deleted('id1', 'a')])
      .when(create('id2', 'a'))
      .then([{ type: 'DatabaseCreated', data: { databaseId: 'id2', name: 'a', metadataSchema: schema, embedder } }]);
  });

  it('requests the deletion of a live database, by the id it was created with', () => {
    given([created('id1', 'a'), created('id2', 'b')]).when({ type: 'RequestDatabaseDeletion', name: 'b' }).then([requested('id2', 'b')]);
  });

  it('a deletion already under way is requested again without an event', () => {
    given([created('id1', 'a'), requested('id1', 'a')]).when({ type: 'RequestDatabaseDeletion', name: 'a' }).thenNothing();
  });

  it('refuses to delete a database that does not exist, or no longer does', () => {
    given([]).when({ type: 'RequestDatabaseDeletion', name: 'zzz' }).thenThrows('DATABASE_NOT_FOUND', 'not_found');
    given([created('id1', 'a'), requested('id1', 'a'), deleted('id1', 'a')]).when({ type: 'RequestDatabaseDeletion', name: 'a' }).thenThrows('DATABASE_NOT_FOUND');
  });
});

describe('database decider', () => {
  const given = deciderSpec({ decide: decideDatabase, evolve: evolveDatabase, initialState: initialDatabase });
  const provisioned: DatabaseEvent = { type: 'DatabaseComponentProvisioned', data: { databaseId: 'd', component: 'graph' } };
  const collectionCreated: DatabaseEvent = { type: 'CollectionCreated', data: { databaseId: 'd', collection: 'c' } };
  const collectionDeleting: DatabaseEvent = { type: 'CollectionDeletionRequested', data: { databaseId: 'd', collection: 'c' } };
  const collectionDeleted: DatabaseEvent = { type: 'CollectionDeleted', data: { databaseId: 'd', collection: 'c', requestedBy: 'k', requestedAt: 't', itemsDeleted: 0 } };

  describe('MarkProvisioned', () => {
    it('records a component the first time, with its detail when there is one', () => {
      given([]).when({ type: 'MarkProvisioned', databaseId: 'd', component: 'graph' }).then([provisioned]);
      given([provisioned])
        .when({ type: 'MarkProvisioned', databaseId: 'd', component: 'scheduler', detail: { table: 't' } })
        .then([{ type: 'DatabaseComponentProvisioned', data: { databaseId: 'd', component: 'scheduler', detail: { table: 't' } } }]);
    });
    it('records each component once', () => {
      given([provisioned]).when({ type: 'MarkProvisioned', databaseId: 'd', component: 'graph' }).thenNothing();
    });
  });

  describe('EnsureCollection', () => {
    const ensure = { type: 'EnsureCollection' as const, databaseId: 'd', collection: 'c' };
    it('creates a collection the first time it is named', () => {
      given([]).when(ensure).then([collectionCreated]);
    });
    it('names an existing collection without an event', () => {
      given([collectionCreated]).when(ensure).thenNothing();
    });
    it('refuses a collection being deleted', () => {
      given([collectionCreated, collectionDeleting]).when(ensure).thenThrows('COLLECTION_DELETING', 'conflict');
    });
    it('creates the collection again once it is deleted', () => {
      given([collectionCreated, collectionDeleting, collectionDeleted]).when(ensure).then([collectionCreated]);
    });
  });

  describe('RequestCollectionDeletion', () => {
    const request = { type: 'RequestCollectionDeletion' as const, databaseId: 'd', collection: 'c' };
    it('requests the deletion of a live collection', () => {
      given([collectionCreated]).when(request).then([collectionDeleting]);
    });
    it('a deletion already under way is requested again without an event', () => {
      given([collectionCreated, collectionDeleting]).when(request).thenNothing();
    });
    it('refuses a collection that does not exist, or no longer does', () => {
      given([]).when(request).thenThrows('COLLECTION_NOT_FOUND', 'not_found');
      given([collectionCreated, collectionDeleting, collectionDeleted]).when(request).thenThrows('COLLECTION_NOT_FOUND');
    });
  });

  describe('ChangeEmbedder', () => {
    const other = { modelId: 'other', dimensions: 8 };
    const change = (to: typeof embedder) => ({ type: 'ChangeEmbedder' as const, databaseId: 'd', embedder: to, createdWith: embedder });
    const changed: DatabaseEvent = { type: 'DatabaseEmbedderChanged', data: { databaseId: 'd', embedder: other, previous: embedder } };

    it('changes from the embedder the database was created with', () => {
      given([]).when(change(other)).then([changed]);
    });
    it('a change to the current embedder changes nothing', () => {
      given([]).when(change(embedder)).thenNothing();
      given([changed]).when(change(other)).thenNothing();
    });
    it('after a change, the current embedder is the last one set, not the one it was created with', () => {
      given([changed])
        .when(change(embedder))
        .then([{ type: 'DatabaseEmbedderChanged', data: { databaseId: 'd', embedder, previous: other } }]);
    });
    it('the same model at other dimensions is another embedder', () => {
      const wider = { modelId: 'm', dimensions: 8 };
      given([]).when(change(wider)).then([{ type: 'DatabaseEmbedderChanged', data: { databaseId: 'd', embedder: wider, previous: embedder } }]);
    });
  });
});
