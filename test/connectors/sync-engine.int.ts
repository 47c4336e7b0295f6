import { randomUUID } from 'node:crypto';
import { configFromEnv } from '@crs/config';
import { CONNECTOR_FOLD, RESOURCE_FOLD } from '@crs/connector-sync/connector-streams';
import { ConnectorScheduler } from '@crs/connector-sync/connector-scheduler';
import { ConnectorLeases } from '@crs/connector-sync/connector-leases';
import { PruneHolds } from '@crs/connector-sync/prune-holds';
import { ResourceSync, type SyncResult } from '@crs/connector-sync/resource-sync';
import { decideConnector, type ConnectorCommand, type ConnectorState } from '@crs/domain/connectors/connector.decider';
import type { ConnectorStreamEvent, ResourceEvent } from '@crs/domain/connectors/connector.events';
import { decideResource, type ResourceCommand, type ResourceState } from '@crs/domain/connectors/resource.decider';
import { streams } from '@crs/domain/streams';
import { handleCommand } from '@crs/eventstore/command-handling';
import * as tokens from '@crs/platform/tokens';
import { startTestApp, type TestApp } from '../support/test-app';
import { FakeProvider } from './fake-provider';

/**
 * The sync engine beyond the conformance suite. Leases and concurrency with a slow source (pages that take longer than
 * a lease): the heartbeat keeps a sync's lease while a page takes long, so a second process cannot take the resource
 * over; a scheduler runs at most `concurrency` syncs at once, and one per connector. And a connector created with
 * permission capture turned off: nothing the source says about permissions is kept.
 */
const ORG = 'default';
const silent = { info: () => undefined, error: () => undefined };

describe('the sync engine: leases, concurrency, capture turned off', () => {
  let t: TestApp;
  let databaseId: string;
  const fake = new FakeProvider();
  const credentialsId = randomUUID();
  const ctx = () => ({ orgId: ORG, actor: 'test', now: new Date() });

  const settle = async () => {
    await t.runner.waitFor(await t.store.headPosition(), undefined, 20_000);
  };
  const onConnector = async (connectorId: string, command: ConnectorCommand) => {
    await handleCommand<ConnectorState, ConnectorStreamEvent, ConnectorCommand>(t.store, streams.connector(connectorId), CONNECTOR_FOLD, decideConnector, command, ctx());
  };
  const onResource = async (connectorId: string, resourceId: string, command: ResourceCommand) => {
    await handleCommand<ResourceState, ResourceEvent, ResourceCommand>(t.store, streams.connectorResource(connectorId, resourceId), RESOURCE_FOLD, decideResource, command, ctx());
  };
  /** A connector of the fake provider with these resources, each holding three documents. */
  const connector = async (resourceIds: string[], captureEnabled = true) => {
    const connectorId = randomUUID();
    await onConnector(connectorId, { type: 'CreateConnector', connectorId, provider: 'fake', databaseId, collection: 'default', credentialsId, providerAccountScope: `scope-${connectorId}`, captureEnabled });
    for (const resourceId of resourceIds) {
      await onResource(connectorId, resourceId, { type: 'ConfigureResource', connectorId, resourceId, resourceType: 'folder', name: resourceId });
      for (const n of [1, 2, 3]) fake.put(resourceId, `${resourceId}-doc-${n}`, `Document ${n} of ${resourceId}.`);
    }
    await settle();
    return connectorId;
  };
  /** A sync engine, as one worker process has it; `connectorLeases: false`: one that goes by the log's resource leases alone. */
  const engine = ({ connectorLeases = true, ...settings }: { leaseMs: number; heartbeatMs?: number; connectorLeases?: boolean }) =>
    new ResourceSync({
      sql: t.ds,
      store: t.store,
      blobs: t.blobs,
      providers: t.get(tokens.CONNECTOR_PROVIDERS),
      credentials: t.get(tokens.CONNECTOR_CREDENTIALS),
      holds: new PruneHolds(t.ds),
      ...(connectorLeases ? { leases: new ConnectorLeases(t.ds) } : {}),
      pipeline: t.pipeline,
      log: silent,
      clock: () => new Date(),
      settings: { massDeletionThreshold: 0.5, ...settings },
    });
  const renewals = async (connectorId: string, resourceId: string) =>
    (await t.store.readStream(streams.connectorResource(connectorId, resourceId))).filter((e) => e.type === 'SyncLeaseRenewed').length;

  beforeAll(async () => {
    t = await startTestApp('connleases', { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true } });
    await t.get(tokens.CONNECTOR_SCHEDULER).stop();
    t.get(tokens.CONNECTOR_PROVIDERS).register(fake);
    await t.get(tokens.CONNECTOR_CREDENTIALS).put(ORG, credentialsId, { token: 'good-token' });
    await t.createDatabase('kb');
    [{ id: databaseId }] = await t.ds.query(`SELECT id FROM rm_databases WHERE name = 'kb'`);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  afterEach(() => {
    fake.pageDelayMs = 0;
    fake.maxActiveSyncs = 0;
  });

  it('a page longer than the lease keeps the lease: a second process is refused, and the first completes', async () => {
    const connectorId = await connector(['slow-1']);
    fake.pageDelayMs = 1_200;
    const job = { orgId: ORG, connectorId, resourceId: 'slow-1', trigger: 'manual' as const };
    const first = engine({ leaseMs: 600 }).run(job);
    // Well past the first leases (600 ms), while the first page is still arriving: the resource lease in the log and
    // the connector's lease were both renewed.
    await new Promise((r) => setTimeout(r, 900));
    expect(await engine({ leaseMs: 600, connectorLeases: false }).run(job)).toMatchObject({ kind: 'skipped', reason: expect.stringContaining('is being synced') });
    expect(await engine({ leaseMs: 600 }).run(job)).toMatchObject({ kind: 'skipped', reason: expect.stringContaining('another sync of connector') });
    const done = await first;
    expect(done).toMatchObject({ kind: 'completed', counts: { upserted: 3 } });
    // The heartbeat renewed it (every 200 ms without a checkpoint); the number depends on timing, so only that it did.
    expect(await renewals(connectorId, 'slow-1')).toBeGreaterThan(0);
  });

  it('without a heartbeat the lapsed lease is taken over, and the first sync stops without recording', async () => {
    const connectorId = await connector(['slow-2']);
    fake.pageDelayMs = 1_200;
    const job = { orgId: ORG, connectorId, resourceId: 'slow-2', trigger: 'manual' as const };
    const first = engine({ leaseMs: 600, heartbeatMs: 60_000 }).run(job);
    await new Promise((r) => setTimeout(r, 900));
    fake.pageDelayMs = 0;
    const second = await engine({ leaseMs: 600, heartbeatMs: 60_000 }).run(job);
    // (the connector's lease lapsed too, so the second process took both)
    expect(second).toMatchObject({ kind: 'completed' });
    expect(await first).toMatchObject({ kind: 'stale' });
    expect(await renewals(connectorId, 'slow-2')).toBe(0);
  });

  it('one sync per connector across processes: a second process is refused another resource of it until the first ends', async () => {
    const connectorId = await connector(['one-a', 'one-b']);
    fake.pageDelayMs = 800;
    const job = (resourceId: string) => ({ orgId: ORG, connectorId, resourceId, trigger: 'manual' as const });
    const first = engine({ leaseMs: 60_000 }).run(job('one-a'));
    await new Promise((r) => setTimeout(r, 300));
    expect(await engine({ leaseMs: 60_000 }).run(job('one-b'))).toMatchObject({ kind: 'skipped', reason: expect.stringContaining(`another sync of connector '${connectorId}' is running`) });
    expect(await first).toMatchObject({ kind: 'completed' });
    fake.pageDelayMs = 0;
    expect(await engine({ leaseMs: 60_000 }).run(job('one-b'))).toMatchObject({ kind: 'completed' });
    // A process that died holding the lease holds it no longer once it expires.
    const leases = new ConnectorLeases(t.ds);
    expect(await leases.acquire(connectorId, 'a-dead-process', new Date(Date.now() + 200), new Date())).toBe(true);
    expect(await engine({ leaseMs: 60_000 }).run(job('one-a'))).toMatchObject({ kind: 'skipped' });
    await new Promise((r) => setTimeout(r, 250));
    expect(await engine({ leaseMs: 60_000 }).run(job('one-a'))).toMatchObject({ kind: 'completed' });
    expect(await leases.heldUntil(connectorId)).toBeNull();
  });

  it('a scheduler runs at most `concurrency` syncs at once, and one per connector', async () => {
    const connectors = [await connector(['c1-a', 'c1-b']), await connector(['c2-a']), await connector(['c3-a'])];
    fake.pageDelayMs = 300;
    const scheduler = new ConnectorScheduler(t.ds, t.get(tokens.CONNECTOR_SYNC_REQUESTS), engine({ leaseMs: 60_000 }), silent, { concurrency: 2, pollMs: 60_000 });
    const results: SyncResult[] = [];
    try {
      for (let round = 0; round < 10 && results.filter((r) => r.kind === 'completed').length < 4; round++) {
        const started = await scheduler.tick();
        expect(started.length).toBeLessThanOrEqual(2);
        const running = scheduler.runningResources();
        expect(running.length).toBeLessThanOrEqual(2);
        // never two resources of one connector at once
        expect(new Set(running.map((r) => r.split('/')[0])).size).toBe(running.length);
        results.push(...(await Promise.all(started)));
        await settle();
      }
    } finally {
      await scheduler.stop();
    }
    expect(results.filter((r) => r.kind === 'completed')).toHaveLength(4);
    expect(fake.maxActiveSyncs).toBe(2);
    for (const [i, id] of connectors.entries()) {
      const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE connector_id = $1`, [id]);
      expect(n).toBe(i === 0 ? 6 : 3);
    }
  });

  it('with capture turned off, neither a document\'s permission nor the resource verdict is kept: the API rule decides', async () => {
    const ada = { status: 'captured' as const, acl: ['user_email:ada@example.com'] };
    fake.resourcePermission = { status: 'captured', acl: ['user_email:bob@example.com'] };
    fake.permissionEvents = true;
    try {
      for (const [capture, resourceId] of [[true, 'cap-on'], [false, 'cap-off']] as const) {
        const connectorId = await connector([resourceId], capture);
        fake.put(resourceId, `${resourceId}-doc-1`, 'A document with a permission of its own.', { permission: ada });
        const job = { orgId: ORG, connectorId, resourceId, trigger: 'manual' as const };
        expect(await engine({ leaseMs: 60_000 }).run(job)).toMatchObject({ kind: 'completed' });
        // a permission-only change the source reports as such
        fake.setPermission(resourceId, `${resourceId}-doc-2`, ada);
        expect(await engine({ leaseMs: 60_000 }).run(job)).toMatchObject({ kind: 'completed' });
        await settle();
        const rows = await t.ds.query(`SELECT external_id, provider_permission FROM rm_items WHERE connector_id = $1 ORDER BY external_id`, [connectorId]);
        const [{ state }] = await t.ds.query(`SELECT state FROM rm_connector_resources WHERE connector_id = $1`, [connectorId]);
        if (capture) {
          expect(rows.filter((r: any) => r.provider_permission !== null).map((r: any) => r.external_id)).toEqual([`${resourceId}-doc-1`, `${resourceId}-doc-2`]);
          expect(state.permission).toEqual({ status: 'captured', acl: ['user_email:bob@example.com'] });
        } else {
          expect(rows.map((r: any) => r.provider_permission)).toEqual([null, null, null]);
          expect(state.permission).toEqual({ status: 'off' });
        }
      }
    } finally {
      fake.resourcePermission = { status: 'captured', acl: null };
      fake.permissionEvents = false;
    }
  });
});
