import { deciderSpec } from '@crs/test/support/decider-spec';
import { decideItem, evolveItem, initialItem } from './item.decider';
import type { IndexingStatus, ItemEvent, ItemIngested } from './item.events';

const given = deciderSpec({ decide: decideItem, evolve: evolveItem, initialState: initialItem });

const ids = { databaseId: 'db', itemKey: 'k1', itemId: 'doc-1', collection: 'c', store: 'knowledge' as const };

/** An ItemIngested at a stream revision (the revision becomes the content version). */
const ingested = (revision: number, over: Partial<ItemIngested['data']> = {}): ItemIngested & { revision: number } => ({
  type: 'ItemIngested',
  revision,
  data: {
    ...ids,
    kind: 'file',
    title: null,
    content: { sha256: `sha-${revision}`, bytes: 5, contentType: 'text/plain' },
    pairs: false,
    isMarkdown: false,
    infer: false,
    customInstructions: null,
    userName: null,
    expiresAt: null,
    metadata: {},
    additionalMetadata: {},
    relations: [],
    sourceType: 'file',
    ...over,
  },
});
const withoutRevision = ({ revision: _revision, ...event }: ItemIngested & { revision: number }): ItemIngested => event;
const advanced = (contentVersion: number, status: IndexingStatus, extra: { errorCode?: string; message?: string; derived?: true } = {}): ItemEvent => ({
  type: 'StatusAdvanced',
  data: { ...ids, contentVersion, status, ...extra },
});
const deleted: ItemEvent = { type: 'ItemDeleted', data: ids };
const advance = (contentVersion: number, status: IndexingStatus, extra: { errorCode?: string; message?: string } = {}) => ({
  type: 'Advance' as const,
  contentVersion,
  status,
  ids,
  ...extra,
});

describe('item decider', () => {
  describe('Ingest', () => {
    const again = withoutRevision(ingested(0, { title: 'again' }));

    it('ingests a new item, upsert or not', () => {
      given([]).when({ type: 'Ingest', upsert: false, event: again }).then([again]);
      given([]).when({ type: 'Ingest', upsert: true, event: again }).then([again]);
    });
    it('refuses an id already live without upsert', () => {
      given([ingested(0)]).when({ type: 'Ingest', upsert: false, event: again }).thenThrows('ITEM_EXISTS', 'conflict');
    });
    it('replaces a live item with upsert', () => {
      given([ingested(0)]).when({ type: 'Ingest', upsert: true, event: again }).then([again]);
    });
    it('a deleted item frees its id', () => {
      given([ingested(0), deleted]).when({ type: 'Ingest', upsert: false, event: again }).then([again]);
    });
  });

  describe('SyncDocument', () => {
    const source = { connectorId: 'c1', resourceId: 'public.t', externalId: '7', contentHash: 'h1' };
    const synced = (revision: number, over: Partial<ItemIngested['data']> = {}) => ingested(revision, { kind: 'app', sourceType: 'app:postgres', connector: source, ...over });
    const sync = (over: Partial<ItemIngested['data']> = {}) => ({ type: 'SyncDocument' as const, event: withoutRevision(synced(1, over)) });

    it('ingests a document the stream does not have, or no longer has', () => {
      given([]).when(sync()).then([sync().event]);
      given([synced(0), deleted]).when(sync()).then([sync().event]);
    });
    it('appends nothing when the item already says the same (the blob hash follows from the content hash)', () => {
      given([synced(0)]).when(sync({ content: { sha256: 'another-blob-hash', bytes: 9, contentType: 'text/plain' } })).thenNothing();
      given([synced(0, { metadata: { b: 1, a: 2 } })]).when(sync({ metadata: { a: 2, b: 1 } })).thenNothing();
    });
    it('a new version when the content hash or a field changed', () => {
      for (const over of [
        { connector: { ...source, contentHash: 'h2' } },
        { title: 'renamed' },
        { metadata: { team: 'b' } },
        { additionalMetadata: { x: 1 } },
        { customInstructions: 'summarize' },
      ]) {
        given([synced(0)]).when(sync(over)).then([sync(over).event]);
      }
    });
    describe('a permission-only change', () => {
      const ada = { status: 'captured' as const, acl: ['user_email:ada@x.io'] };
      const bob = { status: 'captured' as const, acl: ['user_email:bob@x.io'] };
      const withPermission = (permission: typeof ada) => ({ connector: { ...source, permission } });
      const changed = (permission: typeof ada | null, previous: typeof ada | null): ItemEvent => ({ type: 'ProviderPermissionChanged', data: { ...ids, permission, previous } });

      it('is a ProviderPermissionChanged, not a new version, when only the permission differs', () => {
        given([synced(0)]).when(sync(withPermission(ada))).then([changed(ada, null)]);
        given([synced(0, withPermission(ada))]).when(sync(withPermission(bob))).then([changed(bob, ada)]);
        given([synced(0, withPermission(ada))]).when(sync()).then([changed(null, ada)]);
      });
      it('a version whose content changed too carries its permission as a new version', () => {
        const over = { connector: { ...source, contentHash: 'h2', permission: ada } };
        given([synced(0)]).when(sync(over)).then([sync(over).event]);
      });
      it('no permission of its own, said either way, is the same: nothing is appended', () => {
        given([synced(0)]).when({ type: 'SyncPermission', ids, permission: { status: 'captured', acl: null } }).thenNothing();
        given([synced(0, { connector: { ...source, permission: { status: 'captured', acl: null } } })]).when({ type: 'SyncPermission', ids, permission: null }).thenNothing();
        given([synced(0)]).when({ type: 'SyncPermission', ids, permission: { status: 'captured', acl: null, unresolved: 2 } }).then([changed({ status: 'captured', acl: null, unresolved: 2 } as never, null)]);
      });
      it('after the change, the same permission again appends nothing', () => {
        given([synced(0), changed(ada, null)]).when(sync(withPermission(ada))).thenNothing();
        given([synced(0), changed(ada, null)]).when({ type: 'SyncPermission', ids, permission: ada }).thenNothing();
      });
      it('SyncPermission changes a live synced item, and nothing else', () => {
        given([synced(0)]).when({ type: 'SyncPermission', ids, permission: ada }).then([changed(ada, null)]);
        given([synced(0, withPermission(ada))]).when({ type: 'SyncPermission', ids, permission: null }).then([changed(null, ada)]);
        given([]).when({ type: 'SyncPermission', ids, permission: ada }).thenNothing();
        given([synced(0), deleted]).when({ type: 'SyncPermission', ids, permission: ada }).thenNothing();
        given([ingested(0)]).when({ type: 'SyncPermission', ids, permission: ada }).thenNothing();
      });
    });
    it('an item not ingested by a sync is replaced by the synced document', () => {
      given([ingested(0)]).when(sync()).then([sync().event]);
    });
    it("keeps the document's own rule in the new version: a change at the source never drops it", () => {
      const rule: ItemEvent = { type: 'AclChanged', data: { ...ids, acl: ['user_email:ann@x.io'], previous: null } };
      const changed = sync({ title: 'renamed' }).event;
      given([synced(0), rule]).when(sync({ title: 'renamed' })).then([{ ...changed, data: { ...changed.data, acl: ['user_email:ann@x.io'] } }]);
      given([synced(0), rule]).when(sync()).thenNothing();
      // and the version that carries it is the source's version: the next sync of the same document appends nothing
      given([synced(0), rule, { ...changed, data: { ...changed.data, acl: ['user_email:ann@x.io'] } }]).when(sync({ title: 'renamed' })).thenNothing();
    });
  });

  describe('UpdateMetadata', () => {
    it('refuses an item that does not exist, or no longer does', () => {
      given([]).when({ type: 'UpdateMetadata', ids, title: 't' }).thenThrows('ITEM_NOT_FOUND', 'not_found');
      given([ingested(0), deleted]).when({ type: 'UpdateMetadata', ids, title: 't' }).thenThrows('ITEM_NOT_FOUND');
    });
    it('a request that names nothing to change decides nothing', () => {
      given([ingested(0)]).when({ type: 'UpdateMetadata', ids }).thenNothing();
    });
    it('records only the fields sent', () => {
      given([ingested(0)]).when({ type: 'UpdateMetadata', ids, metadata: { team: 'a' } }).then([{ type: 'ItemMetadataUpdated', data: { ...ids, metadata: { team: 'a' } } }]);
      given([ingested(0)])
        .when({ type: 'UpdateMetadata', ids, additionalMetadata: { thread: 't1' }, title: null })
        .then([{ type: 'ItemMetadataUpdated', data: { ...ids, additionalMetadata: { thread: 't1' }, title: null } }]);
    });
    it('the same ACL again changes nothing (the audit trail records changes only)', () => {
      given([ingested(0, { acl: ['user:a', 'user:b'] })]).when({ type: 'UpdateMetadata', ids, acl: ['user:a', 'user:b'] }).thenNothing();
      const changed: ItemEvent = { type: 'AclChanged', data: { ...ids, acl: ['user:c'], previous: ['user:a'] } };
      given([ingested(0, { acl: ['user:a'] }), changed]).when({ type: 'UpdateMetadata', ids, acl: ['user:c'] }).thenNothing();
    });
    it('another ACL is recorded with the one it replaces', () => {
      given([ingested(0, { acl: ['user:a', 'user:b'] })])
        .when({ type: 'UpdateMetadata', ids, acl: ['user:b', 'user:a'] })
        .then([{ type: 'AclChanged', data: { ...ids, acl: ['user:b', 'user:a'], previous: ['user:a', 'user:b'] } }]);
      given([ingested(0, { acl: ['user:a'] })])
        .when({ type: 'UpdateMetadata', ids, acl: ['user:a', 'user:b'] })
        .then([{ type: 'AclChanged', data: { ...ids, acl: ['user:a', 'user:b'], previous: ['user:a'] } }]);
    });
    it('an ACL on an unrestricted item is a change, even an empty one; its previous ACL is null', () => {
      given([ingested(0)]).when({ type: 'UpdateMetadata', ids, acl: [] }).then([{ type: 'AclChanged', data: { ...ids, acl: [], previous: null } }]);
    });
    it('metadata and ACL together: the metadata first, then the ACL', () => {
      given([ingested(0)])
        .when({ type: 'UpdateMetadata', ids, title: 'T', acl: ['user:a'] })
        .then([
          { type: 'ItemMetadataUpdated', data: { ...ids, title: 'T' } },
          { type: 'AclChanged', data: { ...ids, acl: ['user:a'], previous: null } },
        ]);
    });
  });

  describe('Delete', () => {
    it('deletes a live item', () => {
      given([ingested(0), advanced(0, 'completed')]).when({ type: 'Delete', ids }).then([deleted]);
    });
    it('refuses an item that does not exist, or no longer does', () => {
      given([]).when({ type: 'Delete', ids }).thenThrows('ITEM_NOT_FOUND', 'not_found');
      given([ingested(0), deleted]).when({ type: 'Delete', ids }).thenThrows('ITEM_NOT_FOUND');
    });
  });

  describe('Advance', () => {
    it('moves the current content version forwards', () => {
      given([ingested(0)]).when(advance(0, 'processing')).then([advanced(0, 'processing')]);
      given([ingested(0), advanced(0, 'processing')]).when(advance(0, 'graph_creation')).then([advanced(0, 'graph_creation')]);
      given([ingested(0), advanced(0, 'processing'), advanced(0, 'graph_creation')]).when(advance(0, 'completed')).then([advanced(0, 'completed')]);
    });
    it('may skip statuses on the way forwards', () => {
      given([ingested(0)]).when(advance(0, 'completed')).then([advanced(0, 'completed')]);
    });
    it('moves only the current content version', () => {
      given([ingested(0), advanced(0, 'processing'), ingested(2)]).when(advance(0, 'completed')).thenNothing();
      given([ingested(0)]).when(advance(1, 'processing')).thenNothing();
    });
    it("an older version's status does not hold back the current one", () => {
      given([ingested(0), ingested(1), advanced(0, 'completed')]).when(advance(1, 'processing')).then([advanced(1, 'processing')]);
    });
    it('a recorded chunk list is processing: a processing status after it appends nothing, graph_creation moves on', () => {
      const chunked = (contentVersion: number): ItemEvent => ({
        type: 'ItemChunked',
        data: { databaseId: 'db', itemKey: 'k1', contentVersion, chunksSha256: 'c'.repeat(64), chunkCount: 1, embedder: 'e', format: 'text', parsedBytes: 5 },
      });
      given([ingested(0), chunked(0)]).when(advance(0, 'processing')).thenNothing();
      given([ingested(0), chunked(0)]).when(advance(0, 'graph_creation')).then([advanced(0, 'graph_creation')]);
      // An older version's chunk list leaves the current version queued.
      given([ingested(0), ingested(1), chunked(0)]).when(advance(1, 'processing')).then([advanced(1, 'processing')]);
    });
    it('a recorded graph is graph_creation: a graph_creation status after it appends nothing, completed moves on', () => {
      const graphed = (contentVersion: number): ItemEvent => ({
        type: 'GraphExtracted',
        data: { databaseId: 'db', itemKey: 'k1', contentVersion, collection: 'c', graphSha256: 'g'.repeat(64), entityCount: 1, relationCount: 0, extractor: 'x' },
      });
      given([ingested(0), graphed(0)]).when(advance(0, 'graph_creation')).thenNothing();
      given([ingested(0), graphed(0)]).when(advance(0, 'processing')).thenNothing();
      given([ingested(0), graphed(0)]).when(advance(0, 'completed')).then([advanced(0, 'completed')]);
      // It never moves a status back, nor out of a terminal one.
      given([ingested(0), advanced(0, 'completed'), graphed(0)]).when(advance(0, 'completed')).thenNothing();
      given([ingested(0), advanced(0, 'errored', { errorCode: 'X' }), graphed(0)]).when(advance(0, 'completed')).thenNothing();
      given([ingested(0), ingested(1), graphed(0)]).when(advance(1, 'graph_creation')).then([advanced(1, 'graph_creation')]);
    });
    it('moves only forwards: never back, never to the same status', () => {
      given([ingested(0), advanced(0, 'graph_creation')]).when(advance(0, 'processing')).thenNothing();
      given([ingested(0), advanced(0, 'processing')]).when(advance(0, 'queued')).thenNothing();
      given([ingested(0), advanced(0, 'processing')]).when(advance(0, 'processing')).thenNothing();
    });
    it('never moves out of a terminal status', () => {
      given([ingested(0), advanced(0, 'completed')]).when(advance(0, 'errored', { errorCode: 'X' })).thenNothing();
      given([ingested(0), advanced(0, 'errored', { errorCode: 'X' })]).when(advance(0, 'processing')).thenNothing();
      given([ingested(0), advanced(0, 'errored', { errorCode: 'X' })]).when(advance(0, 'completed')).thenNothing();
    });
    it('errors from any status that is not terminal, with its code and message', () => {
      const history: ItemEvent[] = [ingested(0)];
      for (const status of ['queued', 'processing', 'graph_creation'] as const) {
        if (status !== 'queued') history.push(advanced(0, status));
        given([...history])
          .when(advance(0, 'errored', { errorCode: 'PARSE_FAILED', message: 'bad pdf' }))
          .then([advanced(0, 'errored', { errorCode: 'PARSE_FAILED', message: 'bad pdf' })]);
      }
    });
    it('a re-ingested item starts again from queued', () => {
      given([ingested(0), advanced(0, 'completed'), ingested(2)]).when(advance(2, 'processing')).then([advanced(2, 'processing')]);
    });
    it('a deleted item does not move', () => {
      given([ingested(0), deleted]).when(advance(0, 'processing')).thenNothing();
      given([]).when(advance(0, 'processing')).thenNothing();
    });
    it("a derived memory's statuses say so", () => {
      given([ingested(0, { kind: 'inferred' })]).when(advance(0, 'completed')).then([advanced(0, 'completed', { derived: true })]);
    });
  });
});
