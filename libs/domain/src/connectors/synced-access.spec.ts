import { evolveConnector, initialConnector } from './connector.decider';
import type { ConnectorStreamEvent, ResourceEvent } from './connector.events';
import { evolveResource, initialResource } from './resource.decider';
import { syncedAccess } from './synced-access';

const ids = { connectorId: 'c1', resourceId: 'chan-1' };
const settings = (acl: string[] | null) => ({ resourceType: 'channel', name: 'general', collection: null, metadata: null, additionalMetadata: null, options: null, acl, customInstructions: null });
const resource = (...events: ResourceEvent[]) => events.reduce(evolveResource, initialResource());
const connector = (...events: ConnectorStreamEvent[]) => events.reduce(evolveConnector, initialConnector());
const created: ConnectorStreamEvent = {
  type: 'ConnectorCreated',
  data: { connectorId: 'c1', provider: 'slack', databaseId: 'd1', collection: 'default', credentialsId: 'k1', customInstructions: null, syncIntervalSeconds: 3600, providerAccountScope: 'acme', captureEnabled: true },
};
const configured = (acl: string[] | null): ResourceEvent => ({ type: 'ResourceConfigured', data: { ...ids, generation: 1, settings: settings(acl) } });
const captured = (acl: string[] | null): ResourceEvent => ({ type: 'PermissionsCaptured', data: { ...ids, syncId: 's1', generation: 1, verdict: { status: 'captured', acl } } });
const failed: ResourceEvent = { type: 'PermissionsCaptured', data: { ...ids, syncId: 's1', generation: 1, verdict: { status: 'failed', message: 'timeout' } } };
const live = connector(created);

describe('syncedAccess: a synced document read against its resource and connector as they stand', () => {
  it('the resource API rule decides when the provider says nothing, and a later rule change applies as is', () => {
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: resource(configured(['group:slack:eng'])), connector: live })).toEqual({
      served: true, acl: ['group:slack:eng'], decidedBy: 'api-rule', fromLastCapture: false,
    });
    const changed = resource(configured(['group:slack:eng']), { type: 'ResourceSettingsChanged', data: { ...ids, acl: ['__public__'], previousAcl: ['group:slack:eng'] } });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: changed, connector: live })).toMatchObject({ served: true, acl: ['__public__'] });
  });

  it('no rule anywhere: unrestricted (rule 4)', () => {
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: resource(configured(null)), connector: live })).toMatchObject({ served: true, acl: undefined, decidedBy: 'unrestricted' });
  });

  it('rule 12: the per-document permission wins over everything, a public one included', () => {
    const r = resource(configured(['user_email:ann@corp.io']), captured(['user_email:bob@corp.io']));
    expect(syncedAccess({ document: { status: 'captured', acl: ['__public__'] }, documentRule: undefined, resource: r, connector: live })).toMatchObject({ acl: ['__public__'], decidedBy: 'document-permission' });
  });

  it('rule 12: a public resource verdict does not override the API rule; another verdict does', () => {
    const rule = configured(['user_email:ann@corp.io']);
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: resource(rule, captured(['__public__'])), connector: live })).toMatchObject({ acl: ['user_email:ann@corp.io'], decidedBy: 'api-rule-over-public-provider-verdict' });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: resource(rule, captured(['user_email:bob@corp.io'])), connector: live })).toMatchObject({ acl: ['user_email:bob@corp.io'], decidedBy: 'resource-permission' });
  });

  it('a document rule set through the API takes the place of the resource rule, below the provider permissions', () => {
    const r = resource(configured(['user_email:ann@corp.io']));
    expect(syncedAccess({ document: undefined, documentRule: ['user_email:dan@corp.io'], resource: r, connector: live })).toMatchObject({ acl: ['user_email:dan@corp.io'], decidedBy: 'api-rule' });
    expect(syncedAccess({ document: { status: 'captured', acl: ['user_email:eve@else.org'] }, documentRule: ['user_email:dan@corp.io'], resource: r, connector: live })).toMatchObject({ acl: ['user_email:eve@else.org'] });
  });

  it('a failed capture keeps the last verdict, and with none closes the document', () => {
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: resource(configured(null), captured(['user_email:bob@corp.io']), failed), connector: live })).toMatchObject({
      acl: ['user_email:bob@corp.io'], fromLastCapture: true,
    });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: resource(configured(['__public__']), failed), connector: live })).toMatchObject({ acl: ['__private__'], decidedBy: 'failed-capture-closed' });
  });

  it('not served from the moment a deletion (policy delete) is accepted, or once the resource is removed; keep goes on under the last rules', () => {
    const r = resource(configured(['user_email:ann@corp.io']));
    const deleting = (contentPolicy: 'delete' | 'keep') => connector(created, { type: 'ConnectorDeletionRequested', data: { connectorId: 'c1', contentPolicy } });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: r, connector: deleting('delete') })).toEqual({ served: false, because: 'connector-deleted' });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: r, connector: deleting('keep') })).toMatchObject({ served: true, acl: ['user_email:ann@corp.io'] });
    const removed = (contentPolicy: 'delete' | 'keep') => resource(configured(['user_email:ann@corp.io']), { type: 'ResourceRemoved', data: { ...ids, generation: 1, contentPolicy } });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: removed('delete'), connector: live })).toEqual({ served: false, because: 'resource-removed' });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: removed('keep'), connector: live })).toMatchObject({ served: true, acl: ['user_email:ann@corp.io'] });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: null, connector: live })).toEqual({ served: false, because: 'unknown-source' });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: r, connector: null })).toEqual({ served: false, because: 'unknown-source' });
  });

  it('a paused connector still serves its documents', () => {
    const paused = connector(created, { type: 'ConnectorPaused', data: { connectorId: 'c1' } });
    expect(syncedAccess({ document: undefined, documentRule: undefined, resource: resource(configured(null)), connector: paused })).toMatchObject({ served: true });
  });
});
