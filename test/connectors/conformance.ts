import { randomUUID } from 'node:crypto';
import { decideConnector, type ConnectorCommand, type ConnectorState } from '@crs/domain/connectors/connector.decider';
import type { ConnectorStreamEvent, ResourceEvent } from '@crs/domain/connectors/connector.events';
import { resourceStatus } from '@crs/domain/connectors/connector-status';
import { decideResource, type ResourceCommand, type ResourceState } from '@crs/domain/connectors/resource.decider';
import type { DomainEvent } from '@crs/domain/domain-event';
import { streams } from '@crs/domain/streams';
import type { Credentials, PermissionCapture } from '@crs/connectors/provider.port';
import { CONNECTOR_FOLD, RESOURCE_FOLD } from '@crs/connector-sync/connector-streams';
import { ConnectorScheduler } from '@crs/connector-sync/connector-scheduler';
import { ResourceSync, type SyncResult } from '@crs/connector-sync/resource-sync';
import { syncedItemId } from '@crs/connector-sync/synced-documents';
import { handleCommand } from '@crs/eventstore/command-handling';
import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import { findConnectorResource } from '@crs/projections/connectors/connectors.queries';
import * as tokens from '@crs/platform/tokens';
import { ConnectorLeases } from '@crs/connector-sync/connector-leases';
import { PruneHolds } from '@crs/connector-sync/prune-holds';
import { waitForStatus } from '../support/ingest';
import { configFromEnv } from '@crs/config';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The conformance suite every connector provider passes (docs/connectors.md, "Sync engine"): the sync engine and its
 * scheduler driven directly against a real app (platform components, an injected clock for leases and intervals),
 * with what is searchable checked through HTTP (`POST /query`, `POST /context/list`).
 *
 * A source says how to change the documents at the provider; capabilities it lacks (a provider that captures no
 * permissions, one whose rate limit cannot be scripted) skip the cases that need them.
 */
export interface ConformanceSource {
  /** the provider id the connector is created with (registered in the app's provider registry by `setUp`) */
  providerId: string;
  resource: { resourceId: string; resourceType: string; name: string; options?: Record<string, unknown> };

  credentials: Credentials;
  /** registers the provider (if it is not built in) and prepares an empty resource */
  setUp(t: TestApp): Promise<void>;
  tearDown(): Promise<void>;
  /** creates or edits a document; its text holds the words the queries look for */
  put(id: string, text: string): Promise<void>;
  remove(id: string): Promise<void>;
  /** makes the provider refuse the credentials (401), and accept them again */
  revokeCredentials(): Promise<void>;
  restoreCredentials(): Promise<void>;
  /** a per-document permission changes at the source, nothing else */
  setPermission?(id: string, permission: PermissionCapture): Promise<void>;
  /** the per-document permission a document has before `setPermission` (default: none, null) */
  initialPermission?: PermissionCapture;
  /** the provider answers 429 until `retryAt`, after `afterCalls` calls succeed */
  rateLimit?(retryAt: Date, afterCalls: number): void;
}

const ORG = 'default';
const SCOPE = 'account-1';
const WORDS = ['aardvark', 'bergamot', 'cassowary', 'dulcimer', 'equinox'];

/** An event store that dies (every call throws) when the `n`th checkpoint is about to be appended: a killed process. */
function killedAtCheckpoint(store: EventStore, n: number): EventStore {
  let checkpoints = 0;
  let dead = false;
  const die = () => {
    dead = true;
    throw new Error('the process was killed');
  };
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: any[]) => {
        if (dead) die();
        if (prop === 'append' || prop === 'appendMany') {
          const events: { type: string }[] = prop === 'append' ? args[1] : args[0].flatMap((r: { events: { type: string }[] }) => r.events);
          if (events.some((e) => e.type === 'SyncCheckpointRecorded') && ++checkpoints >= n) die();
        }
        return value.apply(target, args);
      };
    },
  });
}

export function connectorConformance(label: string, makeSource: () => ConformanceSource): void {
  describe(`connector conformance: ${label}`, () => {
    // What the source can script decides which cases run; the others are reported as skipped, not passed.
    const capabilities = makeSource();
    const itWhen = (supported: unknown) => (supported ? it : it.skip);
    let t: TestApp;
    let source: ConformanceSource;
    let databaseId: string;
    let now = Date.parse('2031-01-01T00:00:00Z');
    const clock = () => new Date(now);
    const advance = (ms: number) => (now += ms);
    const HOUR = 3600_000;
    const LEASE_MS = 60_000;
    const connectorId = randomUUID();
    const credentialsId = randomUUID();
    let engine: ResourceSync;
    let scheduler: ConnectorScheduler;
    let resourceId: string;

    const itemIdOf = (externalId: string) => syncedItemId(source.providerId, SCOPE, resourceId, externalId);
    const ctx = () => ({ orgId: ORG, actor: 'test', now: clock() });

    async function settle(): Promise<void> {
      const head = await t.store.headPosition();
      await t.runner.waitFor(head, undefined, 20_000);
    }

    async function onConnector(command: ConnectorCommand): Promise<void> {
      await handleCommand<ConnectorState, ConnectorStreamEvent, ConnectorCommand>(t.store, streams.connector(connectorId), CONNECTOR_FOLD, decideConnector, command, ctx());
      await settle();
    }

    async function onResource(command: ResourceCommand): Promise<void> {
      await handleCommand<ResourceState, ResourceEvent, ResourceCommand>(t.store, streams.connectorResource(connectorId, resourceId), RESOURCE_FOLD, decideResource, command, ctx());
      await settle();
    }

    function makeEngine(store: EventStore): ResourceSync {
      return new ResourceSync({
        sql: t.ds,
        store,
        blobs: t.blobs,
        providers: t.get(tokens.CONNECTOR_PROVIDERS),
        credentials: t.get(tokens.CONNECTOR_CREDENTIALS),
        holds: new PruneHolds(t.ds),
        leases: new ConnectorLeases(t.ds),
        pipeline: t.pipeline,
        log: { info: () => undefined, error: () => undefined },
        clock,
        settings: { leaseMs: LEASE_MS, massDeletionThreshold: 0.5 },
      });
    }

    /** One scheduler round: starts what is due or asked for and waits for those syncs to end. */
    async function round(): Promise<SyncResult[]> {
      await settle();
      const results = await Promise.all(await scheduler.tick());
      await settle();
      return results;
    }

    type ItemChange = RecordedEvent<Extract<DomainEvent, { type: 'ItemIngested' | 'ItemDeleted' }>>;
    async function itemEvents(): Promise<ItemChange[]> {
      return (await t.store.readAll()).filter((e): e is ItemChange => (e.type === 'ItemIngested' || e.type === 'ItemDeleted') && e.data.databaseId === databaseId);
    }

    async function resourceEvents(): Promise<RecordedEvent[]> {
      return t.store.readStream(streams.connectorResource(connectorId, resourceId));
    }

    async function liveItems(): Promise<{ item_id: string; metadata: any; additional_metadata: any; acl: any; provider_permission: any; content_sha256: string; content_version: number }[]> {
      return t.ds.query(`SELECT item_id, metadata, additional_metadata, acl, provider_permission, content_sha256, content_version FROM rm_items WHERE database_id = $1 ORDER BY item_id`, [databaseId]);
    }

    async function queryIds(word: string): Promise<string[]> {
      const q = await t.request('POST', '/query', { body: { database: 'kb', query: word, query_by: 'text', query_apps: true } });
      expect(q.status).toBe(200);
      return q.body.data.chunks.map((c: any) => c.id);
    }

    async function listedIds(): Promise<string[]> {
      const res = await t.request('POST', '/context/list', { body: { database: 'kb', type: 'knowledge', page_size: 100 } });
      expect(res.status).toBe(200);
      return res.body.data.sources.map((i: any) => i.id);
    }

    async function status(): Promise<ReturnType<typeof resourceStatus>> {
      const row = await findConnectorResource(t.ds, connectorId, resourceId);
      return resourceStatus(row!.state);
    }

    const completed = (results: SyncResult[]) => {
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ kind: 'completed' });
      return results[0] as Extract<SyncResult, { kind: 'completed' }>;
    };

    beforeAll(async () => {
      source = makeSource();
      resourceId = source.resource.resourceId;
      // The sources are on this machine's loopback: private networks are allowed here (never in production).
      t = await startTestApp(`conn-${label.replace(/\W+/g, '').slice(0, 12)}`, { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true } });
      // The engine is driven here with an injected clock; the platform's own scheduler stays out of the way.
      await t.get(tokens.CONNECTOR_SCHEDULER).stop();
      await source.setUp(t);
      await t.createDatabase('kb');
      [{ id: databaseId }] = await t.ds.query(`SELECT id FROM rm_databases WHERE name = 'kb'`);
      await t.get(tokens.CONNECTOR_CREDENTIALS).put(ORG, credentialsId, source.credentials);
      engine = makeEngine(t.store);
      scheduler = new ConnectorScheduler(t.ds, t.get(tokens.CONNECTOR_SYNC_REQUESTS), engine, { info: () => undefined, error: () => undefined }, { concurrency: 2, pollMs: 60_000 }, clock);
      await onConnector({ type: 'CreateConnector', connectorId, provider: source.providerId, databaseId, collection: 'default', credentialsId, providerAccountScope: SCOPE, customInstructions: 'Name the people involved.' });
      await onResource({ type: 'ConfigureResource', connectorId, ...source.resource, metadata: { team: 'docs' }, additionalMetadata: { origin: 'conformance', resource_id: 'not-this' } });
      for (const [i, w] of WORDS.entries()) await source.put(`d${i}`, `Document ${i} is about the ${w} and nothing else.`);
    }, 120_000);

    afterAll(async () => {
      await scheduler?.stop();
      await source?.tearDown();
      await t?.close();
    });

    it('first sync ingests every document, searchable through POST /query with query_apps', async () => {
      const sync = completed(await round());
      expect(sync.counts).toMatchObject({ upserted: 5, failed: 0 });
      const started = (await resourceEvents()).find((e) => e.type === 'SyncStarted');
      expect(started?.data).toMatchObject({ trigger: 'initial', cursor: null });
      const ids = WORDS.map((_, i) => itemIdOf(`d${i}`));
      await waitForStatus(t, 'kb', ids, ['graph_creation', 'completed'], 60_000);
      for (const [i, w] of WORDS.entries()) expect(await queryIds(w)).toContain(ids[i]);
      const items = await liveItems();
      expect(items).toHaveLength(5);
      for (const item of items) {
        expect(item.acl).toBeNull();
        expect(item.metadata).toMatchObject({ team: 'docs', connector_id: connectorId, provider: source.providerId, custom_instructions: 'Name the people involved.' });
        expect(item.additional_metadata).toMatchObject({ origin: 'conformance', connector_id: connectorId, resource_id: resourceId });
      }
      expect(await status()).toEqual({ status: 'healthy', reason: null });
    });

    it('a second sync of an unchanged source appends no item event', async () => {
      const before = (await itemEvents()).length;
      advance(HOUR + 1000);
      const sync = completed(await round());
      expect(sync.counts).toMatchObject({ upserted: 0, deleted: 0 });
      expect((await itemEvents()).length).toBe(before);
      const started = (await resourceEvents()).filter((e) => e.type === 'SyncStarted');
      expect(started[started.length - 1].data).toMatchObject({ trigger: 'scheduled' });
    });

    it('an edit gives one new version of that document, and only that one', async () => {
      const before = (await itemEvents()).length;
      await source.put('d0', 'Document 0 now speaks of the zeppelin instead.');
      advance(HOUR + 1000);
      completed(await round());
      const added = (await itemEvents()).slice(before);
      expect(added.map((e) => [e.type, e.data.itemId])).toEqual([['ItemIngested', itemIdOf('d0')]]);
      await waitForStatus(t, 'kb', [itemIdOf('d0')], ['graph_creation', 'completed'], 60_000);
      expect(await queryIds('zeppelin')).toContain(itemIdOf('d0'));
      expect(await queryIds('aardvark')).not.toContain(itemIdOf('d0'));
    });

    it('a document deleted at the source is removed: gone from /query and /context/list', async () => {
      await source.remove('d1');
      advance(HOUR + 1000);
      const sync = completed(await round());
      expect(sync.counts.deleted).toBe(1);
      expect(await queryIds('bergamot')).not.toContain(itemIdOf('d1'));
      const listed = await listedIds();
      expect(listed).not.toContain(itemIdOf('d1'));
      expect(listed).toContain(itemIdOf('d2'));
    });

    itWhen(capabilities.setPermission)('a permission-only change gives the item its new permission without a new version or re-indexing', async () => {
      if (!source.setPermission) throw new Error('the source lost its setPermission');
      const before = await itemEvents();
      const [row] = (await liveItems()).filter((r) => r.item_id === itemIdOf('d2'));
      const permission: PermissionCapture = { status: 'captured', acl: ['user_email:ada@example.com'] };
      await source.setPermission('d2', permission);
      advance(HOUR + 1000);
      const sync = completed(await round());
      expect(sync.counts).toMatchObject({ upserted: 0, deleted: 0, permissions: 1 });
      // No new version: no ItemIngested, the same content version and chunks; one ProviderPermissionChanged.
      expect((await itemEvents()).slice(before.length)).toEqual([]);
      const changes = (await t.store.readAll()).filter((e) => e.type === 'ProviderPermissionChanged' && e.data.databaseId === databaseId);
      expect(changes.map((e) => e.data)).toEqual([expect.objectContaining({ itemId: itemIdOf('d2'), permission, previous: source.initialPermission ?? null })]);
      const [after] = (await liveItems()).filter((r) => r.item_id === itemIdOf('d2'));
      expect(after).toMatchObject({ content_version: row.content_version, content_sha256: row.content_sha256, provider_permission: permission });
      // The new permission decides at once: Ada retrieves the document, another principal does not.
      const hits = async (acl: string[]) => {
        const q = await t.request('POST', '/query', { body: { database: 'kb', query: WORDS[2], query_by: 'text', query_apps: true, acl } });
        expect(q.status).toBe(200);
        return q.body.data.chunks.map((c: any) => c.id);
      };
      expect(await hits(['ada@example.com'])).toContain(itemIdOf('d2'));
      expect(await hits(['bob@example.com'])).not.toContain(itemIdOf('d2'));
      // The same permission again changes nothing.
      advance(HOUR + 1000);
      completed(await round());
      expect((await t.store.readAll()).filter((e) => e.type === 'ProviderPermissionChanged' && e.data.databaseId === databaseId)).toHaveLength(1);
    });

    it('a sync killed mid-crawl resumes from its last checkpoint with no duplicate and no loss', async () => {
      const fresh = ['f0', 'f1', 'f2', 'f3', 'f4', 'f5'];
      for (const id of fresh) await source.put(id, `Fresh ${id} mentions the gazebo.`);
      const before = (await itemEvents()).length;
      advance(HOUR + 1000);
      await settle();
      // The process dies as it is about to record its second checkpoint: the second page's items are in the log,
      // its cursor is not.
      const doomed = makeEngine(killedAtCheckpoint(t.store, 2));
      await expect(doomed.run({ orgId: ORG, connectorId, resourceId, trigger: 'scheduled' })).rejects.toThrow('the process was killed');
      await settle();
      const afterKill = (await itemEvents()).slice(before);
      expect(afterKill.length).toBeGreaterThan(0);
      expect(afterKill.length).toBeLessThan(fresh.length);
      // Nothing is due while its lease runs; once it expires the sync is taken over.
      expect(await round()).toEqual([]);
      advance(LEASE_MS + 1000);
      const sync = completed(await round());
      const started = (await resourceEvents()).filter((e) => e.type === 'SyncStarted');
      expect(started[started.length - 1].data).toHaveProperty('supersedes');
      expect(sync.counts.upserted + afterKill.length).toBe(fresh.length);
      const ingested = (await itemEvents()).slice(before).filter((e) => e.type === 'ItemIngested').map((e) => e.data.itemId);
      expect([...ingested].sort()).toEqual(fresh.map(itemIdOf).sort());
    });

    itWhen(capabilities.rateLimit)('a 429 defers the sync (degraded, not failed) and it resumes after Retry-After', async () => {
      if (!source.rateLimit) throw new Error('the source lost its rateLimit');
      for (const id of ['r0', 'r1', 'r2', 'r3']) await source.put(id, `Rate ${id} is about the quokka.`);
      const retryAt = new Date(now + HOUR + 10 * 60_000);
      advance(HOUR + 1000);
      // permissions, listing and the first page answer; the second page is throttled
      source.rateLimit(retryAt, 3);
      const [deferred] = await round();
      expect(deferred).toMatchObject({ kind: 'deferred', reason: 'rate_limited', retryAt: retryAt.toISOString() });
      const events = await resourceEvents();
      expect(events.filter((e) => e.type === 'SyncFailed')).toHaveLength(0);
      expect(events[events.length - 1]).toMatchObject({ type: 'SyncDeferred', data: { reason: 'rate_limited', retryAt: retryAt.toISOString() } });
      expect((await status()).status).toBe('degraded');
      advance(5 * 60_000);
      expect(await round()).toEqual([]);
      advance(10 * 60_000);
      const sync = completed(await round());
      expect(sync.counts.upserted).toBe(2);
      expect((await status()).status).toBe('healthy');
      const started = (await resourceEvents()).filter((e) => e.type === 'SyncStarted');
      expect(started[started.length - 1].data.cursor).not.toBeNull();
    });

    it('a 401 marks the resource unauthorized with a message a person can act on', async () => {
      await source.revokeCredentials();
      advance(HOUR + 1000);
      const [failed] = await round();
      expect(failed).toMatchObject({ kind: 'failed', failure: 'auth' });
      const st = await status();
      expect(st.status).toBe('unauthorized');
      expect(st.reason).toMatch(/credentials/);
      await source.restoreCredentials();
      advance(HOUR + 1000);
      completed(await round());
      expect((await status()).status).toBe('healthy');
    });

    it('a replaced resource syncs again from the beginning', async () => {
      const before = (await itemEvents()).length;
      await onResource({ type: 'ReplaceResource', connectorId, ...source.resource, metadata: { team: 'docs' }, additionalMetadata: { origin: 'conformance', resource_id: 'not-this' } });
      const sync = completed(await round());
      const started = (await resourceEvents()).filter((e) => e.type === 'SyncStarted');
      expect(started[started.length - 1].data).toMatchObject({ cursor: null, trigger: 'initial', generation: 2 });
      expect(sync.counts.upserted).toBe(0);
      // every document read once more, each already held as it is
      expect(sync.counts.unchanged).toBe((await liveItems()).length);
      expect((await itemEvents()).length).toBe(before);
    });

    it('pause stops scheduled syncs (a manual one still runs) and resume restarts them', async () => {
      await onConnector({ type: 'Pause', connectorId });
      advance(2 * HOUR);
      expect(await round()).toEqual([]);
      await t.get(tokens.CONNECTOR_SYNC_REQUESTS).request(connectorId, resourceId);
      const [manual] = await round();
      expect(manual).toMatchObject({ kind: 'completed' });
      expect((await resourceEvents()).filter((e) => e.type === 'SyncStarted').pop()?.data).toMatchObject({ trigger: 'manual' });
      advance(2 * HOUR);
      expect(await round()).toEqual([]);
      await onConnector({ type: 'Resume', connectorId });
      const sync = completed(await round());
      expect(sync.counts).toMatchObject({ upserted: 0, deleted: 0 });
      expect((await resourceEvents()).filter((e) => e.type === 'SyncStarted').pop()?.data).toMatchObject({ trigger: 'scheduled' });
    });

    it('an empty listing is held until the next sync confirms it, then applied', async () => {
      const live = (await liveItems()).length;
      expect(live).toBeGreaterThan(3);
      const ids = [...['d0', 'd2', 'd3', 'd4'], 'f0', 'f1', 'f2', 'f3', 'f4', 'f5', ...(source.rateLimit ? ['r0', 'r1', 'r2', 'r3'] : [])];
      for (const id of ids) await source.remove(id);
      advance(HOUR + 1000);
      const held = completed(await round());
      expect(held).toMatchObject({ pruneHeld: true, counts: { deleted: 0 } });
      expect((await liveItems()).length).toBe(live);
      advance(HOUR + 1000);
      const applied = completed(await round());
      expect(applied).toMatchObject({ pruneHeld: false, counts: { deleted: live } });
      expect(await liveItems()).toEqual([]);
      expect(await listedIds()).toEqual([]);
    });

    it('deleting the connector deletes its synced items and its credentials, then marks it deleted', async () => {
      await source.put('z0', 'The last document, on the narwhal.');
      advance(HOUR + 1000);
      completed(await round());
      expect((await liveItems()).map((i) => i.item_id)).toEqual([itemIdOf('z0')]);
      await onConnector({ type: 'RequestDeletion', connectorId });
      const deadline = Date.now() + 20_000;
      while (!(await t.store.readStream(streams.connector(connectorId))).some((e) => e.type === 'ConnectorDeleted')) {
        if (Date.now() > deadline) throw new Error('the connector was not marked deleted');
        await new Promise((r) => setTimeout(r, 50));
      }
      await settle();
      expect(await liveItems()).toEqual([]);
      expect(await t.get(tokens.CONNECTOR_CREDENTIALS).get(ORG, credentialsId)).toBeNull();
      // a deleted connector is never synced again
      advance(HOUR + 1000);
      expect(await round()).toEqual([]);
    });
  });
}
