import { deciderSpec } from '@crs/test/support/decider-spec';
import { MAX_CUSTOM_INSTRUCTIONS_CHARACTERS } from './connector-settings';
import type { PermissionVerdict, ResourceEvent, ResourceSettings, SyncCounts } from './connector.events';
import { decideResource, evolveResource, initialResource, resourcePermission, type ResourceCommand } from './resource.decider';

const given = deciderSpec({ decide: decideResource, evolve: evolveResource, initialState: initialResource });
const fold = (events: ResourceEvent[]) => events.reduce(evolveResource, initialResource());

const ids = { connectorId: 'c1', resourceId: 'public.orders' };
/** A time `minutes` after the epoch: the decider only compares times. */
const at = (minutes: number) => new Date(minutes * 60_000).toISOString();

const base: ResourceSettings = {
  resourceType: 'table',
  name: 'Orders',
  collection: null,
  metadata: null,
  additionalMetadata: null,
  options: null,
  acl: null,
  customInstructions: null,
};
type Cmd<T extends ResourceCommand['type']> = Omit<Extract<ResourceCommand, { type: T }>, 'type' | 'connectorId' | 'resourceId'>;
const configure = (fields: Partial<Cmd<'ConfigureResource'>> = {}): ResourceCommand => ({ type: 'ConfigureResource', ...ids, resourceType: 'table', name: 'Orders', ...fields });
const replace = (fields: Partial<Cmd<'ReplaceResource'>> = {}): ResourceCommand => ({ type: 'ReplaceResource', ...ids, resourceType: 'table', name: 'Orders', ...fields });
const change = (fields: Cmd<'ChangeResourceSettings'>): ResourceCommand => ({ type: 'ChangeResourceSettings', ...ids, ...fields });
const start = (syncId: string, now = 0, leaseMinutes = 5, trigger: 'scheduled' | 'manual' | 'initial' = 'scheduled'): ResourceCommand => ({
  type: 'StartSync',
  ...ids,
  syncId,
  trigger,
  now: at(now),
  leaseExpiresAt: at(now + leaseMinutes),
});

const configured = (settings: Partial<ResourceSettings> = {}, generation = 1): ResourceEvent => ({ type: 'ResourceConfigured', data: { ...ids, generation, settings: { ...base, ...settings } } });
const replaced = (settings: Partial<ResourceSettings> = {}, generation = 2): ResourceEvent => ({ type: 'ResourceReplaced', data: { ...ids, generation, settings: { ...base, ...settings } } });
const settingsChanged = (fields: { customInstructions?: string | null; acl?: string[]; previousAcl?: string[] | null }): ResourceEvent => ({ type: 'ResourceSettingsChanged', data: { ...ids, ...fields } });
const removed = (generation = 1, contentPolicy: 'delete' | 'keep' = 'delete'): ResourceEvent => ({ type: 'ResourceRemoved', data: { ...ids, generation, contentPolicy } });
const started = (syncId: string, generation = 1, cursor: string | null = null, now = 0, extra: { supersedes?: string; trigger?: 'scheduled' | 'manual' | 'initial' } = {}): ResourceEvent => ({
  type: 'SyncStarted',
  data: { ...ids, syncId, generation, trigger: extra.trigger ?? 'scheduled', cursor, startedAt: at(now), leaseExpiresAt: at(now + 5), ...(extra.supersedes ? { supersedes: extra.supersedes } : {}) },
});
const counts = (upserted: number, failed = 0): SyncCounts => ({ upserted, unchanged: 0, deleted: 0, failed });
const checkpoint = (syncId: string, cursor: string, c = counts(10), generation = 1, leaseUntil = 10): ResourceEvent => ({
  type: 'SyncCheckpointRecorded',
  data: { ...ids, syncId, generation, cursor, counts: c, leaseExpiresAt: at(leaseUntil) },
});
const completed = (syncId: string, cursor: string | null, c = counts(10), generation = 1): ResourceEvent => ({ type: 'SyncCompleted', data: { ...ids, syncId, generation, cursor, counts: c } });
const failed = (syncId: string, consecutiveFailures: number, kind: 'auth' | 'transient' = 'transient', generation = 1): ResourceEvent => ({
  type: 'SyncFailed',
  data: { ...ids, syncId, generation, kind, message: `${kind} failure`, consecutiveFailures },
});
const permissions = (syncId: string, verdict: PermissionVerdict, generation = 1): ResourceEvent => ({ type: 'PermissionsCaptured', data: { ...ids, syncId, generation, verdict } });

const ruled: Partial<ResourceSettings> = { acl: ['user_email:ann@example.com'], customInstructions: 'Orders only.' };
/** a resource with a rule and instructions, synced once to cursor "p1" */
const synced: ResourceEvent[] = [configured(ruled), started('s1'), checkpoint('s1', 'p1'), completed('s1', 'p1')];

const emoji = '\u{1F600}';
const limit = emoji.repeat(MAX_CUSTOM_INSTRUCTIONS_CHARACTERS);

describe('resource decider', () => {
  describe('ConfigureResource', () => {
    it('adds a resource as generation 1, with no rule and no instructions unless sent', () => {
      given([]).when(configure()).then([configured()]);
    });
    it('adds a resource with what was sent; the acl in stored form', () => {
      given([])
        .when(configure({ collection: 'sales', metadata: { team: 'ops' }, additionalMetadata: { src: 'erp' }, options: { id_columns: ['id'] }, acl: [' Ann@Example.com', 'ann@example.com'], customInstructions: 'Orders only.' }))
        .then([configured({ collection: 'sales', metadata: { team: 'ops' }, additionalMetadata: { src: 'erp' }, options: { id_columns: ['id'] }, acl: ['user_email:ann@example.com'], customInstructions: 'Orders only.' })]);
    });
    it('configuring again keeps the sync position, instructions and access rule (rule 2)', () => {
      given(synced).when(configure({ name: 'All orders' })).then([configured({ ...ruled, name: 'All orders' })]);
      const state = fold([...synced, configured({ ...ruled, name: 'All orders' })]);
      expect(state).toMatchObject({ generation: 1, cursor: 'p1', completedGeneration: 1 });
      given([...synced, configured({ ...ruled, name: 'All orders' })]).when(start('s2', 10)).then([started('s2', 1, 'p1', 10)]);
    });
    it('configuring again clears the other fields it omits', () => {
      given([configured({ collection: 'sales', metadata: { team: 'ops' }, options: { page_size: 10 } })]).when(configure()).then([configured()]);
    });
    it('configuring again with instructions or a rule applies them: "" clears the instructions, [] closes the resource', () => {
      given(synced).when(configure({ customInstructions: '' })).then([configured({ ...ruled, customInstructions: null })]);
      given(synced).when(configure({ acl: [] })).then([configured({ ...ruled, acl: ['__private__'] })]);
      given(synced).when(configure({ acl: ['__public__'], customInstructions: 'New.' })).then([configured({ acl: ['__public__'], customInstructions: 'New.' })]);
    });
    it('the same configuration again decides nothing', () => {
      given(synced).when(configure()).thenNothing();
      given(synced).when(configure({ acl: ['ann@example.com'], customInstructions: 'Orders only.' })).thenNothing();
      given([configured({ metadata: { a: 1, b: [1, 2] } })]).when(configure({ metadata: { b: [1, 2], a: 1 } })).thenNothing();
    });
    it('refuses a missing or blank name or resource_type (they must be sent every time)', () => {
      given(synced).when(configure({ name: '' })).thenThrows('INVALID_INPUT', 'validation');
      given(synced).when(configure({ resourceType: '  ' })).thenThrows('INVALID_INPUT', 'validation');
      given([]).when({ type: 'ConfigureResource', ...ids, name: 'Orders' } as unknown as ResourceCommand).thenThrows('INVALID_INPUT', 'validation');
    });
    it('accepts 4,000 characters of instructions and refuses 4,001 (an emoji counts once)', () => {
      given([]).when(configure({ customInstructions: limit })).then([configured({ customInstructions: limit })]);
      given(synced).when(configure({ customInstructions: `${limit}${emoji}` })).thenThrows('INVALID_INPUT', 'validation');
    });
    it('refuses a malformed principal', () => {
      given([]).when(configure({ acl: ['not a principal'] })).thenThrows('INVALID_INPUT', 'validation');
    });
    it('after a removal, adds the resource again as a new generation from the beginning, with its rule closed rather than dropped (rule 13)', () => {
      given([...synced, removed()]).when(configure()).then([configured({ acl: ['__private__'] }, 2)]);
      given([configured(), removed()]).when(configure()).then([configured({}, 2)]);
      const state = fold([...synced, removed(), configured({ acl: ['__private__'] }, 2)]);
      expect(state).toMatchObject({ phase: 'live', generation: 2, cursor: null, completedGeneration: null, consecutiveFailures: 0, lastOutcome: null });
    });
  });

  describe('ReplaceResource', () => {
    it('adds a resource that does not exist', () => {
      given([]).when(replace({ customInstructions: 'x' })).then([configured({ customInstructions: 'x' })]);
    });
    it('replaces the whole resource: a new generation, omitted fields cleared', () => {
      given([configured({ collection: 'sales', metadata: { team: 'ops' }, customInstructions: 'Orders only.' })]).when(replace()).then([replaced()]);
    });
    it('the cursor is cleared: the next sync starts from the beginning, in the new generation', () => {
      const history = [...synced, replaced({ acl: ['__private__'] })];
      expect(fold(history)).toMatchObject({ generation: 2, cursor: null, running: null });
      given(history).when(start('s2', 10)).then([started('s2', 2, null, 10)]);
    });
    it('an omitted rule on a resource that had one is __private__, never none (deleting a rule never widens access)', () => {
      given(synced).when(replace()).then([replaced({ acl: ['__private__'] })]);
      given([...synced, replaced({ acl: ['__private__'] })]).when(replace()).then([replaced({ acl: ['__private__'] }, 3)]);
    });
    it('a sent rule or instructions apply', () => {
      given(synced).when(replace({ acl: ['__public__'], customInstructions: 'New.' })).then([replaced({ acl: ['__public__'], customInstructions: 'New.' })]);
    });
    it('replacing with the same settings still starts over (the sync runs again from the beginning)', () => {
      given([configured()]).when(replace()).then([replaced()]);
    });
    it('refuses what configure refuses', () => {
      given(synced).when(replace({ name: '' })).thenThrows('INVALID_INPUT');
      given(synced).when(replace({ customInstructions: 'a'.repeat(4001) })).thenThrows('INVALID_INPUT');
    });
  });

  describe('ChangeResourceSettings', () => {
    it('changes only what is sent', () => {
      given(synced).when(change({ customInstructions: 'Refunds too.' })).then([settingsChanged({ customInstructions: 'Refunds too.' })]);
      given(synced)
        .when(change({ acl: ['bob@example.com'] }))
        .then([settingsChanged({ acl: ['user_email:bob@example.com'], previousAcl: ['user_email:ann@example.com'] })]);
    });
    it('"" clears the instructions (back to the connector\'s)', () => {
      given(synced).when(change({ customInstructions: '' })).then([settingsChanged({ customInstructions: null })]);
    });
    it('[] and null close the resource (__private__); ["__public__"] reopens it', () => {
      given(synced).when(change({ acl: [] })).then([settingsChanged({ acl: ['__private__'], previousAcl: ['user_email:ann@example.com'] })]);
      given(synced).when(change({ acl: null })).then([settingsChanged({ acl: ['__private__'], previousAcl: ['user_email:ann@example.com'] })]);
      const closed = [...synced, settingsChanged({ acl: ['__private__'], previousAcl: ['user_email:ann@example.com'] })];
      given(closed).when(change({ acl: ['__public__'] })).then([settingsChanged({ acl: ['__public__'], previousAcl: ['__private__'] })]);
    });
    it('sets a first rule, recording that there was none', () => {
      given([configured()]).when(change({ acl: ['ann@example.com'] })).then([settingsChanged({ acl: ['user_email:ann@example.com'], previousAcl: null })]);
    });
    it('the same values again, or nothing sent, decide nothing', () => {
      given(synced).when(change({ customInstructions: 'Orders only.', acl: ['ANN@example.com'] })).thenNothing();
      given([configured()]).when(change({ customInstructions: '' })).thenNothing();
      given(synced).when(change({})).thenNothing();
    });
    it('accepts 4,000 characters and refuses 4,001, the acl sent with them unchanged', () => {
      given(synced).when(change({ customInstructions: limit })).then([settingsChanged({ customInstructions: limit })]);
      given(synced).when(change({ customInstructions: `${limit}${emoji}`, acl: ['__public__'] })).thenThrows('INVALID_INPUT', 'validation');
    });
    it('refuses a malformed principal', () => {
      given(synced).when(change({ acl: ['x'] })).thenThrows('INVALID_INPUT', 'validation');
    });
    it('refuses a resource never configured, or removed', () => {
      given([]).when(change({ customInstructions: 'x' })).thenThrows('RESOURCE_NOT_FOUND', 'not_found');
      given([...synced, removed()]).when(change({ customInstructions: 'x' })).thenThrows('RESOURCE_NOT_FOUND', 'not_found');
    });
  });

  describe('RemoveResource', () => {
    it('removes the resource; its synced content is deleted by default, or kept', () => {
      given(synced).when({ type: 'RemoveResource', ...ids }).then([removed(1, 'delete')]);
      given(synced).when({ type: 'RemoveResource', ...ids, contentPolicy: 'keep' }).then([removed(1, 'keep')]);
    });
    it('a sync running at the removal can record nothing more', () => {
      given([configured(), started('s1'), removed()])
        .when({ type: 'RecordCheckpoint', ...ids, syncId: 's1', generation: 1, cursor: 'p9', counts: counts(1), leaseExpiresAt: at(10) })
        .thenThrows('SYNC_NOT_CURRENT', 'conflict');
    });
    it('refuses a resource never configured, or already removed', () => {
      given([]).when({ type: 'RemoveResource', ...ids }).thenThrows('RESOURCE_NOT_FOUND', 'not_found');
      given([...synced, removed()]).when({ type: 'RemoveResource', ...ids }).thenThrows('RESOURCE_NOT_FOUND', 'not_found');
    });
  });

  describe('StartSync', () => {
    it('starts the first sync from the beginning, and later ones from the cursor', () => {
      given([configured()]).when(start('s1', 0, 5, 'initial')).then([started('s1', 1, null, 0, { trigger: 'initial' })]);
      given(synced).when(start('s2', 10, 5, 'manual')).then([started('s2', 1, 'p1', 10, { trigger: 'manual' })]);
    });
    it('refuses while another sync of this generation holds its lease', () => {
      given([configured(), started('s1', 1, null, 0)]).when(start('s2', 4)).thenThrows('SYNC_RUNNING', 'conflict');
    });
    it('a checkpoint renews the lease', () => {
      given([configured(), started('s1', 1, null, 0), checkpoint('s1', 'p1', counts(1), 1, 20)]).when(start('s2', 10)).thenThrows('SYNC_RUNNING');
    });
    it('takes over a sync whose lease expired, naming it', () => {
      given([configured(), started('s1', 1, null, 0), checkpoint('s1', 'p1')]).when(start('s2', 10)).then([started('s2', 1, 'p1', 10, { supersedes: 's1' })]);
    });
    it('the same sync again decides nothing', () => {
      given([configured(), started('s1', 1, null, 0)]).when(start('s1', 1)).thenNothing();
    });
    it('refuses a resource never configured, or removed', () => {
      given([]).when(start('s1')).thenThrows('RESOURCE_NOT_FOUND', 'not_found');
      given([...synced, removed()]).when(start('s2', 10)).thenThrows('RESOURCE_NOT_FOUND', 'not_found');
    });
    it('refuses times that are not ISO 8601, and a lease that ends before it starts', () => {
      given([configured()]).when({ type: 'StartSync', ...ids, syncId: 's1', trigger: 'manual', now: 'soon', leaseExpiresAt: at(5) }).thenThrows('INVALID_INPUT');
      given([configured()]).when({ type: 'StartSync', ...ids, syncId: 's1', trigger: 'manual', now: at(5), leaseExpiresAt: at(5) }).thenThrows('INVALID_INPUT');
    });
  });

  describe('RecordCheckpoint', () => {
    const record = (syncId: string, generation = 1, cursor = 'p2'): ResourceCommand => ({ type: 'RecordCheckpoint', ...ids, syncId, generation, cursor, counts: counts(5), leaseExpiresAt: at(10) });
    it('moves the cursor of the running sync', () => {
      given([configured(), started('s1')]).when(record('s1')).then([checkpoint('s1', 'p2', counts(5))]);
    });
    it('a sync whose lease expired but that nobody took over still records', () => {
      given([configured(), started('s1', 1, null, 0)]).when(record('s1')).then([checkpoint('s1', 'p2', counts(5))]);
    });
    it('refuses a sync that was taken over: a stale worker cannot move the cursor', () => {
      given([configured(), started('s1', 1, null, 0), started('s2', 1, null, 10, { supersedes: 's1' })]).when(record('s1')).thenThrows('SYNC_NOT_CURRENT', 'conflict');
    });
    it('refuses a sync of a replaced generation', () => {
      given([configured(), started('s1'), replaced()]).when(record('s1', 1)).thenThrows('SYNC_NOT_CURRENT', 'conflict');
      // even once a sync of the new generation runs
      given([configured(), started('s1'), replaced(), started('s2', 2, null, 1)]).when(record('s1', 1)).thenThrows('SYNC_NOT_CURRENT');
      // and the new sync's id with the old generation
      given([configured(), started('s1'), replaced(), started('s2', 2, null, 1)]).when(record('s2', 1)).thenThrows('SYNC_NOT_CURRENT');
    });
    it('refuses when no sync runs (never started, or ended)', () => {
      given([configured()]).when(record('s1')).thenThrows('SYNC_NOT_CURRENT');
      given(synced).when(record('s1')).thenThrows('SYNC_NOT_CURRENT');
      given([configured(), started('s1'), failed('s1', 1)]).when(record('s1')).thenThrows('SYNC_NOT_CURRENT');
    });
  });

  describe('RenewLease', () => {
    const renew = (syncId: string, now: number, until: number, generation = 1): ResourceCommand => ({ type: 'RenewLease', ...ids, syncId, generation, now: at(now), leaseExpiresAt: at(until) });
    const renewed = (syncId: string, until: number): ResourceEvent => ({ type: 'SyncLeaseRenewed', data: { ...ids, syncId, generation: 1, leaseExpiresAt: at(until) } });
    it('renews the running sync\'s lease: another process cannot take the resource over until it ends', () => {
      given([configured(), started('s1', 1, null, 0)]).when(renew('s1', 3, 8)).then([renewed('s1', 8)]);
      given([configured(), started('s1', 1, null, 0), renewed('s1', 8)]).when(start('s2', 6)).thenThrows('SYNC_RUNNING');
      // without the renewal the lease (5 minutes) had run out at minute 6
      given([configured(), started('s1', 1, null, 0)]).when(start('s2', 6)).then([started('s2', 1, null, 6, { supersedes: 's1' })]);
    });
    it('a lapsed lease nobody took over is renewed, as a checkpoint would record', () => {
      given([configured(), started('s1', 1, null, 0)]).when(renew('s1', 7, 12)).then([renewed('s1', 12)]);
    });
    it('refuses a sync that was taken over, replaced or ended, and a lease that ends before now', () => {
      given([configured(), started('s1', 1, null, 0), started('s2', 1, null, 10, { supersedes: 's1' })]).when(renew('s1', 11, 15)).thenThrows('SYNC_NOT_CURRENT', 'conflict');
      given([configured(), started('s1'), replaced()]).when(renew('s1', 1, 5)).thenThrows('SYNC_NOT_CURRENT');
      given(synced).when(renew('s1', 1, 5)).thenThrows('SYNC_NOT_CURRENT');
      given([configured(), started('s1')]).when(renew('s1', 5, 5)).thenThrows('INVALID_INPUT');
    });
  });

  describe('RecordPermissions', () => {
    const record = (verdict: PermissionVerdict, syncId = 's1'): ResourceCommand => ({ type: 'RecordPermissions', ...ids, syncId, generation: 1, verdict });
    const captured: PermissionVerdict = { status: 'captured', acl: ['user_email:ann@example.com'] };
    it('records the verdict of the running sync', () => {
      given([configured(), started('s1')]).when(record(captured)).then([permissions('s1', captured)]);
      given([configured(), started('s1')]).when(record({ status: 'off' })).then([permissions('s1', { status: 'off' })]);
    });
    it('the verdict already recorded decides nothing', () => {
      given([configured(), started('s1'), permissions('s1', captured)]).when(record(captured)).thenNothing();
      given([configured(), started('s0'), permissions('s0', captured), completed('s0', null), started('s1', 1, null, 10)]).when(record(captured)).thenNothing();
    });
    it('a failed capture is recorded, and keeps the last captured verdict for access', () => {
      const history = [configured(), started('s1'), permissions('s1', captured), permissions('s1', { status: 'failed', message: 'timeout' })];
      expect(resourcePermission(fold(history))).toEqual({ status: 'failed', last: { acl: ['user_email:ann@example.com'] } });
      expect(resourcePermission(fold([...history, permissions('s1', { status: 'failed', message: 'again' })]))).toEqual({ status: 'failed', last: { acl: ['user_email:ann@example.com'] } });
      expect(resourcePermission(fold([configured(), started('s1'), permissions('s1', { status: 'failed', message: 'timeout' })]))).toEqual({ status: 'failed' });
      expect(resourcePermission(fold([configured()]))).toEqual({ status: 'off' });
    });
    it('refuses a sync that is not the running one', () => {
      given([configured(), started('s1'), started('s2', 1, null, 10, { supersedes: 's1' })]).when(record(captured, 's1')).thenThrows('SYNC_NOT_CURRENT', 'conflict');
    });
  });

  describe('CompleteSync', () => {
    const complete = (syncId = 's1', generation = 1): ResourceCommand => ({ type: 'CompleteSync', ...ids, syncId, generation });
    it("completes the running sync at its last cursor, with the sync's totals", () => {
      given([configured(), started('s1'), checkpoint('s1', 'p1', counts(10)), checkpoint('s1', 'p2', counts(3, 2))]).when(complete()).then([completed('s1', 'p2', counts(13, 2))]);
      given([configured(), started('s1')]).when(complete()).then([completed('s1', null, counts(0))]);
    });
    it('counts only its own checkpoints, not those of the sync it took over', () => {
      given([configured(), started('s1'), checkpoint('s1', 'p1', counts(10)), started('s2', 1, 'p1', 10, { supersedes: 's1' }), checkpoint('s2', 'p2', counts(4))])
        .when(complete('s2'))
        .then([completed('s2', 'p2', counts(4))]);
    });
    it('clears the failure count', () => {
      const history = [configured(), started('s1'), failed('s1', 1), started('s2', 1, null, 10), failed('s2', 2), started('s3', 1, null, 20), completed('s3', null, counts(0))];
      expect(fold(history)).toMatchObject({ consecutiveFailures: 0, lastFailure: null, authFailure: null, completedGeneration: 1 });
      given([...history, started('s4', 1, null, 30)])
        .when({ type: 'FailSync', ...ids, syncId: 's4', generation: 1, kind: 'transient', message: 'transient failure' })
        .then([failed('s4', 1)]);
    });
    it('refuses a sync that is not the running one', () => {
      given([configured(), started('s1'), replaced()]).when(complete()).thenThrows('SYNC_NOT_CURRENT', 'conflict');
      given(synced).when(complete()).thenThrows('SYNC_NOT_CURRENT');
    });
  });

  describe('DeferSync', () => {
    const defer = (syncId = 's1', retryAt = at(60)): ResourceCommand => ({ type: 'DeferSync', ...ids, syncId, generation: 1, retryAt, reason: 'rate_limited' });
    it('defers the running sync; it resumes from its last checkpoint', () => {
      given([configured(), started('s1'), checkpoint('s1', 'p1')])
        .when(defer())
        .then([{ type: 'SyncDeferred', data: { ...ids, syncId: 's1', generation: 1, retryAt: at(60), reason: 'rate_limited' } }]);
      const history: ResourceEvent[] = [configured(), started('s1'), checkpoint('s1', 'p1'), { type: 'SyncDeferred', data: { ...ids, syncId: 's1', generation: 1, retryAt: at(60), reason: 'rate_limited' } }];
      given(history).when(start('s2', 60)).then([started('s2', 1, 'p1', 60)]);
    });
    it('is not a failure: the count stands', () => {
      const history: ResourceEvent[] = [configured(), started('s1'), failed('s1', 1), started('s2', 1, null, 10), { type: 'SyncDeferred', data: { ...ids, syncId: 's2', generation: 1, retryAt: at(60), reason: 'stopped' } }];
      expect(fold(history).consecutiveFailures).toBe(1);
    });
    it('refuses a sync that is not the running one, and a retry time that is not ISO 8601', () => {
      given([configured()]).when(defer()).thenThrows('SYNC_NOT_CURRENT', 'conflict');
      given([configured(), started('s1')]).when(defer('s1', 'later')).thenThrows('INVALID_INPUT');
    });
  });

  describe('FailSync', () => {
    const fail = (syncId: string, kind: 'auth' | 'transient' = 'transient', generation = 1): ResourceCommand => ({ type: 'FailSync', ...ids, syncId, generation, kind, message: `${kind} failure` });
    it('counts failures in a row', () => {
      given([configured(), started('s1')]).when(fail('s1')).then([failed('s1', 1)]);
      given([configured(), started('s1'), failed('s1', 1), started('s2', 1, null, 10)]).when(fail('s2')).then([failed('s2', 2)]);
      given([configured(), started('s1'), failed('s1', 1), started('s2', 1, null, 10), failed('s2', 2), started('s3', 1, null, 20)]).when(fail('s3', 'auth')).then([failed('s3', 3, 'auth')]);
    });
    it('records the kind and the reason', () => {
      expect(fold([configured(), started('s1'), failed('s1', 1, 'auth')])).toMatchObject({ lastFailure: { kind: 'auth', message: 'auth failure' }, authFailure: { kind: 'auth' }, running: null });
    });
    it('refuses a sync that is not the running one', () => {
      given([configured(), started('s1'), started('s2', 1, null, 10, { supersedes: 's1' })]).when(fail('s1')).thenThrows('SYNC_NOT_CURRENT', 'conflict');
      given([configured(), started('s1'), replaced()]).when(fail('s1')).thenThrows('SYNC_NOT_CURRENT');
    });
  });
});
