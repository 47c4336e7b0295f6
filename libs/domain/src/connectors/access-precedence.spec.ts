import { effectiveAccess, PermissionCapture } from './access-precedence';

const off: PermissionCapture = { status: 'off' };
const silent: PermissionCapture = { status: 'captured', acl: null };
const captured = (...acl: string[]): PermissionCapture => ({ status: 'captured', acl });
const failed: PermissionCapture = { status: 'failed' };
const failedKeeping = (...acl: string[]): PermissionCapture => ({ status: 'failed', last: { acl } });

const ANN = 'user_email:ann@corp.io';
const BOB = 'user_email:bob@corp.io';
const ENG = 'group:slack:eng';

describe('effectiveAccess (rule 12)', () => {
  it('a per-document permission wins over a resource verdict and an API rule', () => {
    expect(effectiveAccess({ document: captured(ANN), resource: captured(ENG), apiRule: [BOB] })).toEqual({ acl: [ANN], decidedBy: 'document-permission', fromLastCapture: false });
  });

  it('a per-document permission of public wins over an API rule too ("wins over everything")', () => {
    expect(effectiveAccess({ document: captured('__public__'), resource: silent, apiRule: [BOB] }).acl).toEqual(['__public__']);
  });

  it('a per-document permission narrower than a public API rule narrows', () => {
    expect(effectiveAccess({ document: captured(ANN), resource: captured('__public__'), apiRule: ['__public__'] }).acl).toEqual([ANN]);
  });

  it('a resource-level public verdict does not override an API rule', () => {
    expect(effectiveAccess({ document: silent, resource: captured('__public__'), apiRule: [BOB] })).toEqual({ acl: [BOB], decidedBy: 'api-rule-over-public-provider-verdict', fromLastCapture: false });
  });

  it('a resource-level public verdict with no API rule makes the document public', () => {
    expect(effectiveAccess({ document: silent, resource: captured('__public__'), apiRule: undefined }).acl).toEqual(['__public__']);
  });

  it('a resource-level restricted verdict wins over the API rule, even a public one', () => {
    expect(effectiveAccess({ document: silent, resource: captured(ENG), apiRule: ['__public__'] })).toEqual({ acl: [ENG], decidedBy: 'resource-permission', fromLastCapture: false });
  });

  it('with no provider verdict the API rule decides', () => {
    expect(effectiveAccess({ document: silent, resource: silent, apiRule: [BOB] }).acl).toEqual([BOB]);
    expect(effectiveAccess({ document: off, resource: off, apiRule: [BOB] }).decidedBy).toBe('api-rule');
  });

  it('with nothing from anywhere the document is unrestricted (rule 4)', () => {
    expect(effectiveAccess({ document: off, resource: off, apiRule: undefined })).toEqual({ acl: undefined, decidedBy: 'unrestricted', fromLastCapture: false });
  });

  it('a failed resource capture keeps the last verdict', () => {
    expect(effectiveAccess({ document: silent, resource: failedKeeping(ENG), apiRule: ['__public__'] })).toEqual({ acl: [ENG], decidedBy: 'resource-permission', fromLastCapture: true });
  });

  it('a failed resource capture with no earlier verdict closes the document, API rule or not', () => {
    expect(effectiveAccess({ document: silent, resource: failed, apiRule: ['__public__'] })).toEqual({ acl: ['__private__'], decidedBy: 'failed-capture-closed', fromLastCapture: false });
    expect(effectiveAccess({ document: off, resource: failed, apiRule: undefined }).acl).toEqual(['__private__']);
  });

  it('a failed per-document capture with no earlier permission closes the document even under a public resource', () => {
    expect(effectiveAccess({ document: failed, resource: captured('__public__'), apiRule: undefined }).acl).toEqual(['__private__']);
  });

  it('a failed per-document capture keeps the last permission', () => {
    expect(effectiveAccess({ document: failedKeeping(ANN), resource: failed, apiRule: undefined })).toEqual({ acl: [ANN], decidedBy: 'document-permission', fromLastCapture: true });
  });

  it('an empty verdict or rule means nobody, never unrestricted', () => {
    expect(effectiveAccess({ document: captured(), resource: silent, apiRule: undefined }).acl).toEqual(['__private__']);
    expect(effectiveAccess({ document: silent, resource: silent, apiRule: [] }).acl).toEqual(['__private__']);
  });
});
