import { connectorStatus, resourceStatus } from './connector-status';
import { evolveConnector, initialConnector } from './connector.decider';
import type { ConnectorStreamEvent, ResourceEvent, SyncCounts, SyncFailureKind } from './connector.events';
import { evolveResource, initialResource } from './resource.decider';

/** Status and lifecycle are derived from histories as the log holds them, folded with the deciders' own evolve. */
const connector = (events: ConnectorStreamEvent[]) => events.reduce(evolveConnector, initialConnector());
const resource = (events: ResourceEvent[]) => events.reduce(evolveResource, initialResource());
const statusOf = (connectorEvents: ConnectorStreamEvent[], ...resources: ResourceEvent[][]) => connectorStatus('c1', connector(connectorEvents), resources.map(resource));

const connectorId = 'c1';
const created: ConnectorStreamEvent = {
  type: 'ConnectorCreated',
  data: { connectorId, provider: 'postgres', databaseId: 'db1', collection: 'main', credentialsId: 'cred1', customInstructions: null, syncIntervalSeconds: 3600, providerAccountScope: 'scope', captureEnabled: true },
};
const paused: ConnectorStreamEvent = { type: 'ConnectorPaused', data: { connectorId } };
const resumed: ConnectorStreamEvent = { type: 'ConnectorResumed', data: { connectorId } };
const deleting: ConnectorStreamEvent = { type: 'ConnectorDeletionRequested', data: { connectorId, contentPolicy: 'delete' } };
const deleted: ConnectorStreamEvent = { type: 'ConnectorDeleted', data: { connectorId, contentPolicy: 'delete' } };

const settings = { resourceType: 'table', name: 'T', collection: null, metadata: null, additionalMetadata: null, options: null, acl: null, customInstructions: null };
const res = (resourceId: string) => {
  const ids = { connectorId, resourceId };
  let n = 0;
  const sync = () => `${resourceId}-s${++n}`;
  return {
    configured: (generation = 1): ResourceEvent => ({ type: 'ResourceConfigured', data: { ...ids, generation, settings } }),
    replaced: (generation = 2): ResourceEvent => ({ type: 'ResourceReplaced', data: { ...ids, generation, settings } }),
    removed: (): ResourceEvent => ({ type: 'ResourceRemoved', data: { ...ids, generation: 1, contentPolicy: 'delete' } }),
    /** a whole sync: started, then completed with these counts */
    completes: (failedDocuments = 0, generation = 1): ResourceEvent[] => {
      const syncId = sync();
      const counts: SyncCounts = { upserted: 5, unchanged: 0, deleted: 0, failed: failedDocuments };
      return [
        { type: 'SyncStarted', data: { ...ids, syncId, generation, trigger: 'scheduled', cursor: null, startedAt: 'a', leaseExpiresAt: 'b' } },
        { type: 'SyncCompleted', data: { ...ids, syncId, generation, cursor: 'p', counts } },
      ];
    },
    /** a whole sync: started, then failed (the count given is what the decider would have recorded) */
    fails: (consecutiveFailures: number, kind: SyncFailureKind = 'transient'): ResourceEvent[] => {
      const syncId = sync();
      return [
        { type: 'SyncStarted', data: { ...ids, syncId, generation: 1, trigger: 'scheduled', cursor: null, startedAt: 'a', leaseExpiresAt: 'b' } },
        { type: 'SyncFailed', data: { ...ids, syncId, generation: 1, kind, message: `${kind} trouble ${consecutiveFailures}`, consecutiveFailures } },
      ];
    },
    defers: (reason: 'rate_limited' | 'stopped'): ResourceEvent[] => {
      const syncId = sync();
      return [
        { type: 'SyncStarted', data: { ...ids, syncId, generation: 1, trigger: 'scheduled', cursor: null, startedAt: 'a', leaseExpiresAt: 'b' } },
        { type: 'SyncDeferred', data: { ...ids, syncId, generation: 1, retryAt: 'later', reason } },
      ];
    },
    captureFails: (): ResourceEvent[] => {
      const syncId = sync();
      return [
        { type: 'SyncStarted', data: { ...ids, syncId, generation: 1, trigger: 'scheduled', cursor: null, startedAt: 'a', leaseExpiresAt: 'b' } },
        { type: 'PermissionsCaptured', data: { ...ids, syncId, generation: 1, verdict: { status: 'failed', message: 'members list timed out' } } },
        { type: 'SyncCompleted', data: { ...ids, syncId, generation: 1, cursor: 'p', counts: { upserted: 0, unchanged: 5, deleted: 0, failed: 0 } } },
      ];
    },
  };
};

describe('resource status', () => {
  const r = res('r1');
  it('healthy before any sync, and after one that completed cleanly', () => {
    expect(resourceStatus(resource([r.configured()]))).toEqual({ status: 'healthy', reason: null });
    expect(resourceStatus(resource([r.configured(), ...r.completes()]))).toEqual({ status: 'healthy', reason: null });
  });
  it('healthy, saying how many members could not be named and which rule governs, after a capture with unresolved members', () => {
    const ids = { connectorId, resourceId: 'r1' };
    const captured = (unresolved: number): ResourceEvent => ({ type: 'PermissionsCaptured', data: { ...ids, syncId: 'r1-s1', generation: 1, verdict: { status: 'captured', acl: null, unresolved } } });
    const ruled: ResourceEvent = { type: 'ResourceSettingsChanged', data: { ...ids, acl: ['user_email:ann@corp.io'] } };
    expect(resourceStatus(resource([r.configured(), captured(3), ...r.completes()]))).toEqual({
      status: 'healthy',
      reason: '3 members at the source could not be resolved to an email; no acl rule is set on the resource, so its documents are closed to every caller until one is',
    });
    expect(resourceStatus(resource([r.configured(), ruled, captured(3), ...r.completes()]))).toEqual({
      status: 'healthy',
      reason: "3 members at the source could not be resolved to an email; the resource's acl rule governs its documents",
    });
    expect(resource([r.configured(), captured(3)]).permission).toEqual({ status: 'captured', acl: null, unresolved: 3 });
  });
  it('degraded when the last sync completed with per-document failures', () => {
    expect(resourceStatus(resource([r.configured(), ...r.completes(2)]))).toMatchObject({ status: 'degraded', reason: expect.stringContaining('2 documents') });
  });
  it('degraded when the permission capture failed (the last verdict is kept)', () => {
    expect(resourceStatus(resource([r.configured(), ...r.captureFails()]))).toMatchObject({ status: 'degraded', reason: expect.stringContaining('members list timed out') });
  });
  it("degraded when the provider's rate limit deferred the sync, not when the worker stopped it", () => {
    expect(resourceStatus(resource([r.configured(), ...r.completes(), ...r.defers('rate_limited')]))).toMatchObject({ status: 'degraded' });
    expect(resourceStatus(resource([r.configured(), ...r.completes(), ...r.defers('stopped')]))).toEqual({ status: 'healthy', reason: null });
  });
  it('degraded after one or two failures in a row, error with the last reason after three', () => {
    const one = [r.configured(), ...r.fails(1)];
    const two = [...one, ...r.fails(2)];
    const three = [...two, ...r.fails(3, 'resource_gone')];
    expect(resourceStatus(resource(one)).status).toBe('degraded');
    expect(resourceStatus(resource(two)).status).toBe('degraded');
    expect(resourceStatus(resource(three))).toEqual({ status: 'error', reason: '3 syncs in a row failed; the last (resource_gone): resource_gone trouble 3' });
    expect(resourceStatus(resource([...three, ...r.defers('stopped')])).status).toBe('error');
  });
  it('a completed sync resets the count: three failures must be in a row', () => {
    const history = [r.configured(), ...r.fails(1), ...r.fails(2), ...r.completes(), ...r.fails(1), ...r.fails(2)];
    expect(resourceStatus(resource(history)).status).toBe('degraded');
    expect(resourceStatus(resource([...history, ...r.completes()])).status).toBe('healthy');
  });
  it('unauthorized after an auth or scope failure, until a sync completes', () => {
    expect(resourceStatus(resource([r.configured(), ...r.fails(1, 'auth')]))).toMatchObject({ status: 'unauthorized', reason: expect.stringContaining('auth trouble') });
    expect(resourceStatus(resource([r.configured(), ...r.fails(1, 'scope')])).status).toBe('unauthorized');
    const history = [r.configured(), ...r.fails(1, 'auth'), ...r.fails(2), ...r.fails(3), ...r.fails(4)];
    expect(resourceStatus(resource(history)).status).toBe('unauthorized');
    expect(resourceStatus(resource([...history, ...r.completes()])).status).toBe('healthy');
  });
});

describe('connector status and lifecycle', () => {
  const a = res('a');
  const b = res('b');
  it('configuring until a resource is configured', () => {
    expect(statusOf([created])).toEqual({ status: 'healthy', reason: null, lifecycle: 'configuring' });
  });
  it('initial_sync until every resource has completed a sync; active then', () => {
    expect(statusOf([created], [a.configured()]).lifecycle).toBe('initial_sync');
    expect(statusOf([created], [a.configured(), ...a.completes()], [b.configured(), ...b.fails(1)]).lifecycle).toBe('initial_sync');
    expect(statusOf([created], [a.configured(), ...a.completes()], [b.configured(), ...b.completes(3)]).lifecycle).toBe('active');
  });
  it('a replaced resource is syncing from the beginning: initial_sync again until it completes', () => {
    const history = [a.configured(), ...a.completes(), a.replaced()];
    expect(statusOf([created], history).lifecycle).toBe('initial_sync');
    expect(statusOf([created], [...history, ...a.completes(0, 2)]).lifecycle).toBe('active');
  });
  it('removed resources count for neither status nor lifecycle', () => {
    expect(statusOf([created], [a.configured(), ...a.completes()], [b.configured(), ...b.fails(1, 'auth'), b.removed()])).toEqual({ status: 'healthy', reason: null, lifecycle: 'active' });
    expect(statusOf([created], [a.configured(), a.removed()]).lifecycle).toBe('configuring');
  });
  it('paused while paused; resume returns to initial_sync or active', () => {
    expect(statusOf([created, paused], [a.configured()]).lifecycle).toBe('paused');
    expect(statusOf([created, paused, resumed], [a.configured()]).lifecycle).toBe('initial_sync');
    expect(statusOf([created, paused, resumed], [a.configured(), ...a.completes()]).lifecycle).toBe('active');
  });
  it('deleting once delete is accepted, paused or not, and after', () => {
    expect(statusOf([created, paused, deleting], [a.configured(), ...a.completes()]).lifecycle).toBe('deleting');
    expect(statusOf([created, deleting, deleted]).lifecycle).toBe('deleting');
  });
  it('the status is the worst resource: healthy < degraded < error < unauthorized', () => {
    const healthy = [a.configured(), ...a.completes()];
    const degraded = [b.configured(), ...b.completes(1)];
    const c = res('c');
    const error = [c.configured(), ...c.fails(1), ...c.fails(2), ...c.fails(3)];
    const d = res('d');
    const unauthorized = [d.configured(), ...d.fails(1, 'auth')];
    expect(statusOf([created], healthy, degraded).status).toBe('degraded');
    expect(statusOf([created], error, healthy, degraded)).toMatchObject({ status: 'error', reason: expect.stringContaining('3 syncs in a row') });
    expect(statusOf([created], error, unauthorized, degraded).status).toBe('unauthorized');
  });
  it('refuses a connector that was never created', () => {
    expect(() => statusOf([])).toThrow(expect.objectContaining({ code: 'CONNECTOR_NOT_FOUND' }));
  });
});
