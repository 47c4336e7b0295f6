import { randomUUID } from 'node:crypto';
import { runCli } from '@crs/cli/cli';
import type { PermissionCapture } from '@crs/domain/connectors/access-precedence';
import { decideConnector, evolveConnector, initialConnector, type ConnectorCommand, type ConnectorState } from '@crs/domain/connectors/connector.decider';
import { CONNECTOR_STREAM_EVENT_TYPES, RESOURCE_EVENT_TYPES, type PermissionVerdict } from '@crs/domain/connectors/connector.events';
import { decideResource, evolveResource, initialResource, type ResourceCommand, type ResourceState } from '@crs/domain/connectors/resource.decider';
import { isEventOf } from '@crs/domain/domain-event';
import { itemKey } from '@crs/domain/items/item-input';
import type { ItemIngested, Store } from '@crs/domain/items/item.events';
import { streams } from '@crs/domain/streams';
import { handleCommand, type CommandContext, type Fold } from '@crs/eventstore/command-handling';
import { decideOnItem } from '@crs/eventstore/item-stream';
import { decideItem } from '@crs/domain/items/item.decider';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, postMultipart, waitForStatus } from '../support/ingest';

/**
 * Access to synced documents (ACL rules 12-14) through HTTP, at every enforcement point. The sync engine is not part
 * of this suite: synced documents are appended as it appends them (ItemIngested with `connector`, content in the blob
 * store), and the connector and resource streams are decided with their deciders; the pipeline indexes the documents
 * like any item.
 */
const CONNECTOR_FOLD: Fold<ConnectorState> = { initial: initialConnector, evolve: (s, e) => (isEventOf(e, CONNECTOR_STREAM_EVENT_TYPES) ? evolveConnector(s, e) : s) };
const RESOURCE_FOLD: Fold<ResourceState> = { initial: initialResource, evolve: (s, e) => (isEventOf(e, RESOURCE_EVENT_TYPES) ? evolveResource(s, e) : s) };

const ids = (res: any) => res.body.data.chunks.map((c: any) => c.id).sort();

describe('access to synced documents is decided on every read (rules 12-14)', () => {
  let t: TestApp;
  let databaseId: string;
  let ctx: CommandContext;
  const connectorId = randomUUID();
  const doomedConnectorId = randomUUID();

  const settle = async (position: number | null) => {
    if (position !== null) expect(await t.runner.waitFor(position, ['connectors', 'items'])).toBe(true);
  };
  const onConnector = async (command: ConnectorCommand) => settle((await handleCommand(t.store, streams.connector(command.connectorId), CONNECTOR_FOLD, decideConnector, command, ctx)).position);
  const onResource = async (command: ResourceCommand) => settle((await handleCommand(t.store, streams.connectorResource(command.connectorId, command.resourceId), RESOURCE_FOLD, decideResource, command, ctx)).position);

  /** A resource with an API rule (undefined: none), and optionally a sync that records a provider verdict. */
  const resource = async (resourceId: string, acl: string[] | null | undefined, verdicts: PermissionVerdict[] = [], connector = connectorId) => {
    await onResource({ type: 'ConfigureResource', connectorId: connector, resourceId, resourceType: 'channel', name: resourceId, ...(acl === undefined ? {} : { acl }) });
    if (!verdicts.length) return;
    const syncId = randomUUID();
    const now = new Date().toISOString();
    await onResource({ type: 'StartSync', connectorId: connector, resourceId, syncId, trigger: 'initial', now, leaseExpiresAt: new Date(Date.now() + 600_000).toISOString() });
    for (const verdict of verdicts) await onResource({ type: 'RecordPermissions', connectorId: connector, resourceId, syncId, generation: 1, verdict });
    await onResource({ type: 'CompleteSync', connectorId: connector, resourceId, syncId, generation: 1 });
  };
  const setRule = (resourceId: string, acl: string[] | null) => onResource({ type: 'ChangeResourceSettings', connectorId, resourceId, acl });

  /** A document as the sync engine appends it: no `acl`, its source and per-document permission under `connector`. */
  const sync = async (doc: { id: string; resourceId: string; text: string; store?: Store; permission?: PermissionCapture; infer?: boolean; connector?: string }) => {
    const store = doc.store ?? 'knowledge';
    const connector = doc.connector ?? connectorId;
    const sha256 = await t.blobs.put(databaseId, doc.text);
    const event: ItemIngested = {
      type: 'ItemIngested',
      data: {
        databaseId, itemKey: itemKey('default', store, doc.id), collection: 'default', store, itemId: doc.id, kind: store === 'memory' ? 'memory' : 'app', title: null,
        content: { sha256, bytes: Buffer.byteLength(doc.text), contentType: 'text/plain' }, pairs: false, isMarkdown: false, infer: doc.infer ?? false,
        customInstructions: null, userName: null, expiresAt: null, metadata: {}, additionalMetadata: { connector_id: connector, resource_id: doc.resourceId, channel: doc.resourceId },
        relations: [], appKind: 'message', appProvider: 'slack', sourceType: 'app:slack',
        connector: { connectorId: connector, resourceId: doc.resourceId, externalId: doc.id, contentHash: sha256, ...(doc.permission ? { permission: doc.permission } : {}) },
      },
    };
    await settle(await decideOnItem(t.store, ctx, databaseId, event.data.itemKey, () => [event]));
  };

  const query = (acl?: string[], extra: Record<string, unknown> = {}) =>
    t.request('POST', '/query', { body: { database: 'conn', query: 'Zephyr ledger note', type: 'knowledge', max_results: 50, ...(acl ? { acl } : {}), ...extra } });
  const sees = async (acl: string[] | undefined, id: string, extra: Record<string, unknown> = {}) => {
    const res = await query(acl, extra);
    expect(res.status).toBe(200);
    return ids(res).includes(id);
  };
  const itemEvents = async (id: string) => (await t.store.readStream(streams.item(databaseId, itemKey('default', 'knowledge', id)))).length;
  const zephyr = (id: string) => `Zephyr ledger note ${id}: the quarterly ledger for ${id}.`;

  beforeAll(async () => {
    t = await startTestApp('connacl');
    await t.createDatabase('conn');
    const [db] = await t.ds.query(`SELECT id, org_id FROM rm_databases WHERE name = 'conn'`);
    databaseId = db.id;
    ctx = { orgId: db.org_id, actor: 'test' };
    for (const [id, scope] of [[connectorId, 'acme'], [doomedConnectorId, 'doomed']]) {
      await onConnector({ type: 'CreateConnector', connectorId: id, provider: 'slack', databaseId, collection: 'default', credentialsId: randomUUID(), providerAccountScope: scope });
    }
    // Ingested through the API first: it creates the collection the synced documents go to.
    await ingestMemories(t, 'conn', [{ id: 'anchor', text: 'The Halcyon migration plan moves every bucket.', relations: { ids: ['linked-1'] } }, { id: 'mem-plain', text: zephyr('mem-plain') }]);
    await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'conn', app_knowledge: JSON.stringify([{ id: 'ingested', content: { text: zephyr('ingested') } }]) });
    await waitForStatus(t, 'conn', ['anchor', 'mem-plain', 'ingested']);
    const captured = (acl: string[] | null): PermissionVerdict => ({ status: 'captured', acl });
    const failed: PermissionVerdict = { status: 'failed', message: 'provider timeout' };
    await resource('r-rule', ['user_email:ann@corp.io']);
    await resource('r-delete', ['user_email:ann@corp.io']);
    await resource('r-doc', ['user_email:ann@corp.io']);
    await resource('r-pub', ['user_email:bob@corp.io'], [captured(['__public__'])]);
    await resource('r-verdict', ['user_email:ann@corp.io'], [captured(['user_email:eve@else.org'])]);
    await resource('r-kept', ['__public__'], [captured(['user_email:ann@corp.io']), failed]);
    await resource('r-closed', ['__public__'], [failed]);
    await resource('r-open', undefined);
    await resource('r-points', ['user_email:ann@corp.io']);
    await resource('r-linked', ['user_email:ann@corp.io']);
    await resource('r-infer', ['user_email:ann@corp.io']);
    await resource('r-doomed', undefined, [], doomedConnectorId);
    const docs = [
      { id: 'rule-1', resourceId: 'r-rule' },
      { id: 'delete-1', resourceId: 'r-delete' },
      { id: 'doc-public', resourceId: 'r-doc', permission: { status: 'captured', acl: ['__public__'] } as PermissionCapture },
      { id: 'doc-bob', resourceId: 'r-doc', permission: { status: 'captured', acl: ['user_email:bob@corp.io'] } as PermissionCapture },
      { id: 'doc-none', resourceId: 'r-doc', permission: { status: 'captured', acl: null } as PermissionCapture },
      { id: 'perm-1', resourceId: 'r-verdict', permission: { status: 'captured', acl: ['user_email:bob@corp.io'] } as PermissionCapture },
      { id: 'pub-1', resourceId: 'r-pub' },
      { id: 'verdict-1', resourceId: 'r-verdict' },
      { id: 'kept-1', resourceId: 'r-kept' },
      { id: 'closed-1', resourceId: 'r-closed' },
      { id: 'open-1', resourceId: 'r-open' },
      { id: 'doomed-1', resourceId: 'r-doomed', connector: doomedConnectorId },
    ];
    for (const d of docs) await sync({ ...d, text: zephyr(d.id) });
    await sync({ id: 'points-1', resourceId: 'r-points', text: 'Orla said, "I adopted a whippet and named him Comet." Zephyr ledger note points-1.' });
    await sync({ id: 'linked-1', resourceId: 'r-linked', store: 'memory', text: 'Owner of the Halcyon migration: the storage squad.' });
    await sync({ id: 'infer-1', resourceId: 'r-infer', store: 'memory', infer: true, text: 'I prefer aisle seats on short flights. I never check luggage.' });
    await waitForStatus(t, 'conn', [...docs.map((d) => d.id), 'points-1', 'linked-1', 'infer-1', 'anchor', 'ingested']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('synced documents carry no ACL and are indexed with no principals: the read model decides', async () => {
    const rows = await t.ds.query(`SELECT item_id, acl, connector_id FROM rm_items WHERE item_id IN ('rule-1', 'doc-bob')`);
    expect(rows.map((r: any) => [r.acl, r.connector_id])).toEqual([[null, connectorId], [null, connectorId]]);
  });

  it('rule 14: a resource rule change applies to already-synced documents on the next query, with no new item event', async () => {
    const before = await itemEvents('rule-1');
    expect(await sees(['ann@corp.io'], 'rule-1')).toBe(true);
    expect(await sees(['bob@corp.io'], 'rule-1')).toBe(false);
    await setRule('r-rule', ['user_email:bob@corp.io']);
    expect(await sees(['ann@corp.io'], 'rule-1')).toBe(false);
    expect(await sees(['bob@corp.io'], 'rule-1')).toBe(true);
    await setRule('r-rule', ['user_email:ann@corp.io']);
    expect(await sees(['ann@corp.io'], 'rule-1')).toBe(true);
    expect(await itemEvents('rule-1')).toBe(before);
  });

  it('rule 13: deleting a rule never widens access; ["__public__"] reopens', async () => {
    expect(await sees(['eve@else.org'], 'delete-1')).toBe(false);
    await setRule('r-delete', null); // [] or null: nobody
    expect(await sees(['ann@corp.io'], 'delete-1')).toBe(false);
    expect(await sees(['eve@else.org'], 'delete-1')).toBe(false);
    // A replace that omits the rule gives __private__ too, never "no rule".
    await onResource({ type: 'ReplaceResource', connectorId, resourceId: 'r-delete', resourceType: 'channel', name: 'r-delete' });
    expect(await sees(['ann@corp.io'], 'delete-1')).toBe(false);
    expect(await sees(['eve@else.org'], 'delete-1')).toBe(false);
    await setRule('r-delete', ['__public__']);
    expect(await sees(['eve@else.org'], 'delete-1')).toBe(true);
  });

  it('rule 12: a per-document provider permission wins over the API rule, a public one included', async () => {
    expect(await sees(['eve@else.org'], 'doc-public')).toBe(true);
    expect(await sees(['bob@corp.io'], 'doc-bob')).toBe(true);
    expect(await sees(['ann@corp.io'], 'doc-bob')).toBe(false);
    // A document with no permission of its own follows the resource's rule.
    expect(await sees(['ann@corp.io'], 'doc-none')).toBe(true);
    expect(await sees(['bob@corp.io'], 'doc-none')).toBe(false);
  });

  it('rule 12: a public resource-level verdict does not override the API rule; another verdict does', async () => {
    expect(await sees(['bob@corp.io'], 'pub-1')).toBe(true);
    expect(await sees(['eve@else.org'], 'pub-1')).toBe(false);
    expect(await sees(['eve@else.org'], 'verdict-1')).toBe(true);
    expect(await sees(['ann@corp.io'], 'verdict-1')).toBe(false);
  });

  it('a failed capture keeps the last verdict, or closes the document when there was none', async () => {
    expect(await sees(['ann@corp.io'], 'kept-1')).toBe(true);
    expect(await sees(['eve@else.org'], 'kept-1')).toBe(false);
    expect(await sees(['ann@corp.io'], 'closed-1')).toBe(false);
    expect(await sees(['eve@else.org'], 'closed-1')).toBe(false);
    // Without a query acl nothing is filtered (rule 6): the document is there.
    expect(await sees(undefined, 'closed-1')).toBe(true);
  });

  it('no rule from anywhere: unrestricted (rule 4)', async () => {
    expect(await sees(['eve@else.org'], 'open-1')).toBe(true);
  });

  it('a document rule set through the metadata edit takes the resource rule\'s place; the engine pre-filter does not drop what the resource verdict allows', async () => {
    // verdict-1: the resource verdict (eve) wins over any API rule, so a document rule for bob changes nothing; a
    // chunk stamped with bob's principal would be dropped by the engine before the read model could decide.
    const edit = await t.request('PATCH', '/context/verdict-1/metadata', { body: { database: 'conn', acl: ['bob@corp.io'] } });
    expect(edit.status).toBe(200);
    expect(await sees(['eve@else.org'], 'verdict-1')).toBe(true);
    expect(await sees(['bob@corp.io'], 'verdict-1')).toBe(false);
    // open-1 has no provider verdict: the document's own rule decides.
    await t.request('PATCH', '/context/open-1/metadata', { body: { database: 'conn', acl: ['bob@corp.io'] } });
    expect(await sees(['eve@else.org'], 'open-1')).toBe(false);
    expect(await sees(['bob@corp.io'], 'open-1')).toBe(true);
  });

  it('query_apps false leaves connector content out, in fast and thinking mode', async () => {
    for (const mode of ['fast', 'thinking']) {
      const all = ids(await query(undefined, { mode, type: 'all' }));
      expect(all).toEqual(expect.arrayContaining(['mem-plain', 'ingested', 'rule-1', 'open-1']));
      // An app item ingested through the API was already connector/app content; a plain memory is not.
      const noApps = ids(await query(undefined, { mode, type: 'all', query_apps: false }));
      expect(noApps).toContain('mem-plain');
      expect(noApps.filter((id: string) => !['mem-plain', 'anchor'].includes(id))).toEqual([]);
    }
  });

  it('metadata_filters.additional_metadata on connector_id or resource_id scopes a query', async () => {
    const byResource = ids(await query(undefined, { metadata_filters: { additional_metadata: { resource_id: 'r-doc' } } }));
    expect(byResource).toEqual(['doc-bob', 'doc-none', 'doc-public']);
    const byConnector = ids(await query(undefined, { metadata_filters: { additional_metadata: { connector_id: doomedConnectorId } } }));
    expect(byConnector).toEqual(['doomed-1']);
    // The filter narrows; access still applies.
    expect(ids(await query(['ann@corp.io'], { metadata_filters: { additional_metadata: { resource_id: 'r-doc' } } }))).toEqual(['doc-none', 'doc-public']);
  });

  it('POST /context/list, GET /context/inspect and presigned content follow the resource rule as it stands', async () => {
    const list = async (acl: string[]) => (await t.request('POST', '/context/list', { body: { database: 'conn', type: 'knowledge', acl, page_size: 100 } })).body.data.sources.map((s: any) => s.id);
    const inspect = (acl: string, mode = 'content') => t.request('GET', `/context/inspect?database=conn&id=points-1&mode=${mode}&acl=${encodeURIComponent(acl)}`);
    expect(await list(['ann@corp.io'])).toContain('points-1');
    expect(await list(['bob@corp.io'])).not.toContain('points-1');
    expect((await inspect('ann@corp.io')).status).toBe(200);
    expect((await inspect('bob@corp.io')).status).toBe(404);
    const url = (await inspect('ann@corp.io', 'url')).body.data.presigned_url as string;
    const fetchUrl = async () => {
      const u = new URL(url);
      const res = await t.app.inject({ method: 'GET', url: u.pathname + u.search });
      return [res.statusCode, res.statusCode === 200 ? res.body : res.json().error.code];
    };
    expect(await fetchUrl()).toEqual([200, expect.stringContaining('Comet')]);
    await setRule('r-points', ['user_email:bob@corp.io']);
    expect(await list(['ann@corp.io'])).not.toContain('points-1');
    expect(await list(['bob@corp.io'])).toContain('points-1');
    expect((await inspect('ann@corp.io')).status).toBe(404);
    expect((await inspect('bob@corp.io')).status).toBe(200);
    // The access the URL was made under changed: it is revoked.
    expect(await fetchUrl()).toEqual([403, 'PRESIGNED_URL_REVOKED']);
    await setRule('r-points', ['user_email:ann@corp.io']);
  });

  it('graph inspection and graph context follow it too', async () => {
    const relations = async (acl: string) => (await t.request('GET', `/context/relations?database=conn&acl=${encodeURIComponent(acl)}`)).body.data.relations.map((r: any) => r.item_id);
    const entities = (acl: string) => t.request('GET', `/context/graph/entities?database=conn&id=points-1&acl=${encodeURIComponent(acl)}`);
    const neighbours = async (acl: string) => (await t.request('GET', `/context/graph/neighbours?database=conn&entity=Orla&acl=${encodeURIComponent(acl)}`)).body.data.count;
    expect(await relations('ann@corp.io')).toContain('points-1');
    expect((await entities('ann@corp.io')).status).toBe(200);
    expect(await neighbours('ann@corp.io')).toBeGreaterThan(0);
    const graphOf = async (acl: string) => (await t.request('POST', '/query', { body: { database: 'conn', query: 'Who adopted Comet?', type: 'knowledge', acl: [acl], mode: 'thinking' } })).body.data;
    const annGraph = await graphOf('ann@corp.io');
    expect(annGraph.chunks.map((c: any) => c.id)).toContain('points-1');
    await setRule('r-points', ['user_email:bob@corp.io']);
    expect(await relations('ann@corp.io')).not.toContain('points-1');
    expect((await entities('ann@corp.io')).status).toBe(404);
    expect(await neighbours('ann@corp.io')).toBe(0);
    const hidden = await graphOf('ann@corp.io');
    expect(hidden.chunks.map((c: any) => c.id)).not.toContain('points-1');
    expect(JSON.stringify(hidden.graph_context)).not.toMatch(/points-1/);
    expect(await relations('bob@corp.io')).toContain('points-1');
    await setRule('r-points', ['user_email:ann@corp.io']);
  });

  it('forceful relations (thinking mode) bring in a linked synced memory only while its rule allows the caller', async () => {
    const linked = async (acl: string) => {
      const res = await t.request('POST', '/query', { body: { database: 'conn', query: 'Halcyon migration plan buckets', type: 'memory', acl: [acl], mode: 'thinking' } });
      expect(res.body.data.chunks.map((c: any) => c.id)).toContain('anchor');
      return Object.values(res.body.data.additional_context).map((c: any) => c.id);
    };
    expect(await linked('ann@corp.io')).toContain('linked-1');
    await setRule('r-linked', ['user_email:bob@corp.io']);
    expect(await linked('ann@corp.io')).not.toContain('linked-1');
    expect(await linked('bob@corp.io')).toContain('linked-1');
    await setRule('r-linked', ['user_email:ann@corp.io']);
  });

  it('memories inferred from a synced memory follow their source\'s access, and query_apps false leaves them out', async () => {
    const derived = async (acl?: string[], extra: Record<string, unknown> = {}) => {
      const res = await t.request('POST', '/query', { body: { database: 'conn', query: 'aisle seats flights luggage', type: 'memory', max_results: 20, ...(acl ? { acl } : {}), ...extra } });
      return ids(res).filter((id: string) => id.startsWith('infer-1::inferred'));
    };
    for (let i = 0; i < 300 && !(await derived()).length; i++) await new Promise((r) => setTimeout(r, 30));
    expect((await derived()).length).toBeGreaterThan(0);
    expect((await derived(['ann@corp.io'])).length).toBeGreaterThan(0);
    expect(await derived(['eve@else.org'])).toEqual([]);
    expect(await derived(undefined, { query_apps: false })).toEqual([]);
    await setRule('r-infer', ['__public__']);
    expect((await derived(['eve@else.org'])).length).toBeGreaterThan(0);
  });

  it('a connector being deleted serves nothing of its content from the moment the deletion is accepted', async () => {
    expect(await sees(undefined, 'doomed-1')).toBe(true);
    await onConnector({ type: 'RequestDeletion', connectorId: doomedConnectorId });
    expect(await sees(undefined, 'doomed-1')).toBe(false);
    expect(await sees(undefined, 'doomed-1', { mode: 'thinking' })).toBe(false);
    const list = await t.request('POST', '/context/list', { body: { database: 'conn', type: 'knowledge', page_size: 100 } });
    expect(list.body.data.sources.map((s: any) => s.id)).not.toContain('doomed-1');
    expect((await t.request('GET', '/context/inspect?database=conn&id=doomed-1')).status).toBe(404);
    // The worker's deletion processor then deletes the items (ItemDeleted); that the read decision alone withholds them
    // before it has is proven on the read model itself (projections/items/synced-access.property.spec.ts).
  });

  it('a removed resource (content policy delete) serves nothing either', async () => {
    expect(await sees(['eve@else.org'], 'doc-public')).toBe(true);
    await onResource({ type: 'RemoveResource', connectorId, resourceId: 'r-doc' });
    expect(await sees(['eve@else.org'], 'doc-public')).toBe(false);
    expect(await sees(undefined, 'doc-none')).toBe(false);
  });

  it('a permission-only change decides on the next query, with no new version; the audit replays both permissions', async () => {
    const key = itemKey('default', 'knowledge', 'perm-1');
    const before = new Date();
    const [row] = await t.ds.query(`SELECT content_version, chunk_count FROM rm_items WHERE item_id = 'perm-1'`);
    expect(await sees(['bob@corp.io'], 'perm-1')).toBe(true);
    expect(await sees(['ann@corp.io'], 'perm-1')).toBe(false);
    await new Promise((r) => setTimeout(r, 5));
    const ids = { databaseId, itemKey: key, itemId: 'perm-1', collection: 'default', store: 'knowledge' as const };
    await settle(await decideOnItem(t.store, ctx, databaseId, key, (state) => decideItem({ type: 'SyncPermission', ids, permission: { status: 'captured', acl: ['user_email:ann@corp.io'] } }, state)));
    expect(await sees(['ann@corp.io'], 'perm-1')).toBe(true);
    expect(await sees(['bob@corp.io'], 'perm-1')).toBe(false);
    expect(await t.ds.query(`SELECT content_version, chunk_count FROM rm_items WHERE item_id = 'perm-1'`)).toEqual([row]);
    // No per-document permission any more: the resource's provider verdict decides.
    await settle(await decideOnItem(t.store, ctx, databaseId, key, (state) => decideItem({ type: 'SyncPermission', ids, permission: null }, state)));
    expect(await sees(['eve@else.org'], 'perm-1')).toBe(true);
    expect(await sees(['ann@corp.io'], 'perm-1')).toBe(false);

    const run = async (...args: string[]) => {
      const out: string[] = [];
      await runCli(args, { out: (l) => out.push(l), err: () => undefined, env: { DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.config.dataDir }, progress: false });
      return JSON.parse(out[0]);
    };
    expect(await run('audit', 'visible', 'perm-1', '--database', 'conn', '--principal', 'bob@corp.io', '--at', before.toISOString())).toMatchObject({ visible: true, synced: { decided_by: 'document-permission' } });
    expect(await run('audit', 'visible', 'perm-1', '--database', 'conn', '--principal', 'bob@corp.io')).toMatchObject({ visible: false, synced: { decided_by: 'resource-permission' } });
    expect(await run('audit', 'visible', 'perm-1', '--database', 'conn', '--principal', 'eve@else.org')).toMatchObject({ visible: true, synced: { decided_by: 'resource-permission' } });
  });

  it('crs audit visible says which rule decided for a synced document', async () => {
    const run = async (...args: string[]) => {
      const out: string[] = [];
      await runCli(args, { out: (l) => out.push(l), err: () => undefined, env: { DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.config.dataDir }, progress: false });
      return JSON.parse(out[0]);
    };
    expect(await run('audit', 'visible', 'rule-1', '--database', 'conn', '--principal', 'ann@corp.io')).toMatchObject({
      visible: true, acl: ['user_email:ann@corp.io'], synced: { connector_id: connectorId, resource_id: 'r-rule', decided_by: 'api-rule', api_rule_of: 'resource' },
    });
    // Its resource was removed (policy delete): withheld at once, then deleted by the worker's deletion processor.
    const removed = await run('audit', 'visible', 'doc-bob', '--database', 'conn', '--principal', 'ann@corp.io');
    expect(removed.visible).toBe(false);
    expect(JSON.stringify(removed)).toMatch(/resource-removed|deleted/);
    expect(await run('audit', 'visible', 'pub-1', '--database', 'conn', '--principal', 'bob@corp.io')).toMatchObject({ visible: true, synced: { decided_by: 'api-rule-over-public-provider-verdict' } });
    expect(await run('audit', 'visible', 'verdict-1', '--database', 'conn', '--principal', 'eve@else.org')).toMatchObject({ visible: true, synced: { decided_by: 'resource-permission' } });
    expect(await run('audit', 'visible', 'kept-1', '--database', 'conn', '--principal', 'ann@corp.io')).toMatchObject({ visible: true, synced: { decided_by: 'resource-permission', from_last_capture: true } });
    expect(await run('audit', 'visible', 'closed-1', '--database', 'conn', '--principal', 'ann@corp.io')).toMatchObject({ visible: false, synced: { decided_by: 'failed-capture-closed' } });
    expect(await run('audit', 'visible', 'open-1', '--database', 'conn', '--principal', 'bob@corp.io')).toMatchObject({ visible: true, synced: { decided_by: 'api-rule', api_rule_of: 'document' } });
    const doc = await run('audit', 'visible', 'doc-public', '--database', 'conn', '--principal', 'eve@else.org', '--at', new Date(Date.now() - 1000 * 60 * 60 * 24 * 365).toISOString());
    expect(doc).toMatchObject({ visible: false, rule: 'the item did not exist at that time' });
  });
});
