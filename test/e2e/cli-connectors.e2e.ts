import { randomUUID } from 'node:crypto';
import { decideConnector, evolveConnector, initialConnector } from '@crs/domain/connectors/connector.decider';
import { decideResource, evolveResource, initialResource, type ResourceCommand } from '@crs/domain/connectors/resource.decider';
import { streams } from '@crs/domain/streams';
import { handleCommand, type CommandContext } from '@crs/eventstore/command-handling';
import { CONNECTOR_SCHEDULER, CONNECTOR_SYNC_REQUESTS } from '@crs/platform/tokens';
import { dueResources } from '@crs/projections/connectors/connectors.queries';
import { crs } from '../support/crs';
import { startTestApp, type TestApp } from '../support/test-app';

/** `crs connectors`: what ops read about connectors and their syncs, from the connectors read model. */
describe('crs connectors', () => {
  let t: TestApp;
  const ctx: CommandContext = { orgId: 'default', actor: 'test' };
  const connectorId = randomUUID();
  const now = () => new Date().toISOString();
  const inAMinute = () => new Date(Date.now() + 60_000).toISOString();

  const onResource = async (command: ResourceCommand) => {
    const out = await handleCommand(t.store, streams.connectorResource(command.connectorId, command.resourceId), { initial: initialResource, evolve: evolveResource }, decideResource, command, ctx);
    if (out.position !== null) await t.runner.waitFor(out.position, ['connectors'], 10_000);
  };

  beforeAll(async () => {
    t = await startTestApp('cli-connectors');
    // What is recorded here is read, never synced: the scheduler would try these made-up resources.
    await t.get(CONNECTOR_SCHEDULER).stop();
    await t.createDatabase('synced');
    const db = await t.directory.find('default', 'synced');
    await handleCommand(t.store, streams.connector(connectorId), { initial: initialConnector, evolve: evolveConnector }, decideConnector, {
      type: 'CreateConnector', connectorId, provider: 'postgres', databaseId: db!.id, collection: 'default', credentialsId: randomUUID(), providerAccountScope: 'acme',
    }, ctx);
    const ids = { connectorId };
    await onResource({ type: 'ConfigureResource', ...ids, resourceId: 'public.orders', resourceType: 'table', name: 'orders' });
    await onResource({ type: 'ConfigureResource', ...ids, resourceId: 'public.users', resourceType: 'table', name: 'users' });
    // orders: one completed sync; users: one failed sync (credentials refused).
    await onResource({ type: 'StartSync', ...ids, resourceId: 'public.orders', syncId: 'sync-1', trigger: 'initial', now: now(), leaseExpiresAt: inAMinute() });
    await onResource({ type: 'RecordCheckpoint', ...ids, resourceId: 'public.orders', syncId: 'sync-1', generation: 1, cursor: 'c1', counts: { upserted: 7, unchanged: 0, deleted: 0, failed: 1 }, leaseExpiresAt: inAMinute() });
    await onResource({ type: 'CompleteSync', ...ids, resourceId: 'public.orders', syncId: 'sync-1', generation: 1 });
    await onResource({ type: 'StartSync', ...ids, resourceId: 'public.users', syncId: 'sync-2', trigger: 'initial', now: now(), leaseExpiresAt: inAMinute() });
    await onResource({ type: 'FailSync', ...ids, resourceId: 'public.users', syncId: 'sync-2', generation: 1, kind: 'auth', message: 'password authentication failed' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists the connector with the status of its worst resource and its lifecycle, and no credentials', async () => {
    const r = await crs(t, 'connectors', 'list');
    expect(r.code).toBe(0);
    const lines = r.out.map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ connector_id: connectorId, provider: 'postgres', status: 'unauthorized', lifecycle: 'initial_sync', resources: 2 });
    expect(r.out.join('\n')).not.toMatch(/credentials/i);
    expect((await crs(t, 'connectors', 'list', '--org', 'other')).out).toEqual([]);
  });

  it('shows each resource: cursor, last outcome and why it is not healthy', async () => {
    const r = await crs(t, 'connectors', 'status', connectorId);
    expect(r.code).toBe(0);
    const [connector, ...resources] = r.out.map((l) => JSON.parse(l));
    expect(connector).toMatchObject({ connector_id: connectorId, status: 'unauthorized', lifecycle: 'initial_sync', paused: false });
    expect(resources.map((x) => [x.resource_id, x.status, x.cursor])).toEqual([
      ['public.orders', 'degraded', 'c1'],
      ['public.users', 'unauthorized', null],
    ]);
    expect(resources[1].reason).toMatch(/password authentication failed/);
    const missing = await crs(t, 'connectors', 'status', randomUUID());
    expect(missing.code).toBe(1);
  });

  it("prints a resource's syncs, newest first, with their counts and outcome", async () => {
    const r = await crs(t, 'connectors', 'log', connectorId, 'public.orders');
    expect(r.code).toBe(0);
    expect(r.out.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ sync_id: 'sync-1', trigger: 'initial', outcome: 'completed', counts: { upserted: 7, unchanged: 0, deleted: 0, failed: 1, permissions: 0 } }),
    ]);
    const failed = (await crs(t, 'connectors', 'log', connectorId, 'public.users')).out.map((l) => JSON.parse(l));
    expect(failed).toEqual([expect.objectContaining({ sync_id: 'sync-2', outcome: 'failed', detail: 'auth: password authentication failed' })]);
    expect((await crs(t, 'connectors', 'log', connectorId, 'public.orders', '--limit', 'x')).code).toBe(1);
  });

  it('requests a sync the scheduler then takes; an unknown connector or resource is refused', async () => {
    const requests = t.get(CONNECTOR_SYNC_REQUESTS);
    await requests.take(100); // nothing left from elsewhere
    expect((await crs(t, 'connectors', 'sync', connectorId, '--resource', 'public.orders')).code).toBe(0);
    expect((await crs(t, 'connectors', 'sync', connectorId, '--resource', 'public.nope')).code).toBe(1);
    expect((await crs(t, 'connectors', 'sync', randomUUID())).code).toBe(1);
    expect((await requests.take(100)).map((q) => [q.connectorId, q.resourceId])).toEqual([[connectorId, 'public.orders']]);
  });

  it('says when a resource is due: after a transient failure a jittered backoff, after a deferral its retry time, else the interval', async () => {
    const ids = { connectorId };
    const due = async (at: Date) => (await dueResources(t.ds, at, 100)).filter((r) => r.connector_id === connectorId).map((r) => r.resource_id).sort();
    await onResource({ type: 'ConfigureResource', ...ids, resourceId: 'public.flaky', resourceType: 'table', name: 'flaky' });
    await onResource({ type: 'StartSync', ...ids, resourceId: 'public.flaky', syncId: 'sync-3', trigger: 'initial', now: now(), leaseExpiresAt: inAMinute() });
    await onResource({ type: 'FailSync', ...ids, resourceId: 'public.flaky', syncId: 'sync-3', generation: 1, kind: 'transient', message: 'connection reset' });
    await onResource({ type: 'ConfigureResource', ...ids, resourceId: 'public.busy', resourceType: 'table', name: 'busy' });
    await onResource({ type: 'StartSync', ...ids, resourceId: 'public.busy', syncId: 'sync-4', trigger: 'initial', now: now(), leaseExpiresAt: inAMinute() });
    const retryAt = new Date(Date.now() + 120_000);
    await onResource({ type: 'DeferSync', ...ids, resourceId: 'public.busy', syncId: 'sync-4', generation: 1, retryAt: retryAt.toISOString(), reason: 'rate_limited' });
    const at = (seconds: number) => new Date(Date.now() + seconds * 1000);
    // One failure: 30 s times 0.8 to 1.2. The completed and the unauthorized resources wait for the interval (an hour).
    expect(await due(at(5))).toEqual([]);
    expect(await due(at(23))).toEqual([]);
    expect(await due(at(37))).toEqual(['public.flaky']);
    expect(await due(at(125))).toEqual(['public.busy', 'public.flaky']);
    expect(await due(at(3700))).toEqual(['public.busy', 'public.flaky', 'public.orders', 'public.users']);
  });

  it('the connectors read model rebuilds from the log and verifies equal, like every read model', async () => {
    const verified = await crs(t, 'projections', 'verify', 'connectors');
    expect(verified.code).toBe(0);
    expect(verified.out.join('\n')).toMatch(/connectors.*equal/);
    const before = await t.ds.query('SELECT connector_id, resource_id, state FROM rm_connector_resources ORDER BY 1, 2');
    expect((await crs(t, 'projections', 'rebuild', 'connectors')).code).toBe(0);
    expect(await t.ds.query('SELECT connector_id, resource_id, state FROM rm_connector_resources ORDER BY 1, 2')).toEqual(before);
    expect(before).toHaveLength(4);
  });
});
