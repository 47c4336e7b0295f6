import fc from 'fast-check';
import { callerPrincipals, isVisible } from '../acl';
import { effectiveAccess, PermissionCapture, StoredAcl } from './access-precedence';

/**
 * Rule 12 (and "a failed capture never widens access") written a second way, as a decision table over what each
 * source is known to say, and checked against effectiveAccess on random inputs.
 */
type Known = 'unknown' | 'partial' | null | StoredAcl;

/**
 * What is known at one level: a capture that failed with nothing earlier is 'unknown'; a restriction whose members
 * could not all be named is 'partial'; silence is null.
 */
function known(c: PermissionCapture): Known {
  if (c.status === 'off') return null;
  const captured = c.status === 'captured' ? c : c.last;
  if (captured === undefined) return 'unknown';
  if (captured.acl === null && (captured.unresolved ?? 0) > 0) return 'partial';
  return captured.acl;
}

type DocClass = 'perm' | 'silent' | 'unknown' | 'partial';
type ResClass = 'public' | 'restricted' | 'silent' | 'unknown' | 'partial';
type Outcome = 'doc' | 'res' | 'api' | 'nobody' | 'everyone';

const docClass = (k: Known): DocClass => (k === 'unknown' || k === 'partial' ? k : k === null ? 'silent' : 'perm');
const resClass = (k: Known): ResClass => (k === 'unknown' || k === 'partial' ? k : k === null ? 'silent' : k.includes('__public__') ? 'public' : 'restricted');

/** Every combination, spelled out. */
const TABLE: Array<[DocClass, ResClass, boolean, Outcome]> = [
  ['perm', 'public', true, 'doc'],
  ['perm', 'public', false, 'doc'],
  ['perm', 'restricted', true, 'doc'],
  ['perm', 'restricted', false, 'doc'],
  ['perm', 'silent', true, 'doc'],
  ['perm', 'silent', false, 'doc'],
  ['perm', 'unknown', true, 'doc'],
  ['perm', 'unknown', false, 'doc'],
  ['unknown', 'public', true, 'nobody'],
  ['unknown', 'public', false, 'nobody'],
  ['unknown', 'restricted', true, 'nobody'],
  ['unknown', 'restricted', false, 'nobody'],
  ['unknown', 'silent', true, 'nobody'],
  ['unknown', 'silent', false, 'nobody'],
  ['unknown', 'unknown', true, 'nobody'],
  ['unknown', 'unknown', false, 'nobody'],
  ['silent', 'public', true, 'api'],
  ['silent', 'public', false, 'res'],
  ['silent', 'restricted', true, 'res'],
  ['silent', 'restricted', false, 'res'],
  ['silent', 'silent', true, 'api'],
  ['silent', 'silent', false, 'everyone'],
  ['silent', 'unknown', true, 'nobody'],
  ['silent', 'unknown', false, 'nobody'],
  ['perm', 'partial', true, 'doc'],
  ['perm', 'partial', false, 'doc'],
  ['unknown', 'partial', true, 'nobody'],
  ['unknown', 'partial', false, 'nobody'],
  ['silent', 'partial', true, 'api'],
  ['silent', 'partial', false, 'nobody'],
  ['partial', 'public', true, 'api'],
  ['partial', 'public', false, 'nobody'],
  ['partial', 'restricted', true, 'api'],
  ['partial', 'restricted', false, 'nobody'],
  ['partial', 'silent', true, 'api'],
  ['partial', 'silent', false, 'nobody'],
  ['partial', 'unknown', true, 'api'],
  ['partial', 'unknown', false, 'nobody'],
  ['partial', 'partial', true, 'api'],
  ['partial', 'partial', false, 'nobody'],
];

function reference(document: PermissionCapture, resource: PermissionCapture, apiRule: StoredAcl | undefined): string[] | undefined {
  const d = known(document);
  const r = known(resource);
  const row = TABLE.find(([dc, rc, api]) => dc === docClass(d) && rc === resClass(r) && api === (apiRule !== undefined));
  if (!row) throw new Error('the table misses a combination');
  const nonEmpty = (acl: StoredAcl) => (acl.length > 0 ? [...acl] : ['__private__']);
  switch (row[3]) {
    case 'doc':
      return nonEmpty(d as StoredAcl);
    case 'res':
      return nonEmpty(r as StoredAcl);
    case 'api':
      return nonEmpty(apiRule!);
    case 'nobody':
      return ['__private__'];
    case 'everyone':
      return undefined;
  }
}

const acl = fc.constantFrom<StoredAcl>(['__public__'], ['__private__'], [], ['user_email:ann@corp.io'], ['domain:corp.io', 'group:slack:eng'], ['group:drive:ops']);
const aclOrNull = fc.option(acl, { nil: null });
/** `unresolved` members: none, or some (which makes a null ACL a restriction that could not be named) */
const unresolvedCount = fc.constantFrom(0, 0, 3);
const withUnresolved = (acl: StoredAcl | null, unresolved: number) => ({ acl, ...(unresolved ? { unresolved } : {}) });
const capture: fc.Arbitrary<PermissionCapture> = fc.oneof(
  fc.constant<PermissionCapture>({ status: 'off' }),
  fc.tuple(aclOrNull, unresolvedCount).map<PermissionCapture>(([a, u]) => ({ status: 'captured', ...withUnresolved(a, u) })),
  fc.constant<PermissionCapture>({ status: 'failed' }),
  fc.tuple(aclOrNull, unresolvedCount).map<PermissionCapture>(([a, u]) => ({ status: 'failed', last: withUnresolved(a, u) })),
);
const apiRule = fc.option(acl, { nil: undefined });
const caller = fc
  .constantFrom<string[] | undefined>(undefined, ['ann@corp.io'], ['bob@corp.io'], ['eve@else.org', 'group:slack:eng'], ['group:drive:ops'], ['__private__'])
  .map((raw) => callerPrincipals(raw));

describe('access precedence (rule 12) against a decision table', () => {
  it('agrees with the table on every combination of captures and API rule', () => {
    fc.assert(
      fc.property(capture, capture, apiRule, (document, resource, api) => {
        expect(effectiveAccess({ document, resource, apiRule: api }).acl).toEqual(reference(document, resource, api));
      }),
      { numRuns: 3000 },
    );
  });

  it('a failed capture with no earlier verdict shows a document to nobody the captured verdict would hide it from', () => {
    fc.assert(
      fc.property(capture, capture, apiRule, aclOrNull, fc.constantFrom('document', 'resource'), caller, (document, resource, api, outcome, level, who) => {
        const input = { document, resource, apiRule: api };
        const failed = effectiveAccess({ ...input, [level]: { status: 'failed' } });
        const captured = effectiveAccess({ ...input, [level]: { status: 'captured', acl: outcome } });
        if (isVisible(failed.acl, who)) expect(isVisible(captured.acl, who)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('a failed capture with an earlier verdict decides as that verdict did', () => {
    fc.assert(
      fc.property(capture, capture, apiRule, aclOrNull, fc.constantFrom('document', 'resource'), (document, resource, api, last, level) => {
        const input = { document, resource, apiRule: api };
        const kept = effectiveAccess({ ...input, [level]: { status: 'failed', last: { acl: last } } });
        const fresh = effectiveAccess({ ...input, [level]: { status: 'captured', acl: last } });
        expect(kept.acl).toEqual(fresh.acl);
      }),
    );
  });

  it('a per-document permission decides alone, whatever the resource verdict and the API rule', () => {
    fc.assert(
      fc.property(acl, capture, apiRule, (doc, resource, api) => {
        const out = effectiveAccess({ document: { status: 'captured', acl: doc }, resource, apiRule: api });
        expect(out.acl).toEqual(doc.length ? [...doc] : ['__private__']);
        expect(out.decidedBy).toBe('document-permission');
      }),
    );
  });

  it('with no per-document permission, a public provider verdict never shows a document beyond the API rule', () => {
    fc.assert(
      fc.property(acl, caller, (api, who) => {
        const out = effectiveAccess({ document: { status: 'captured', acl: null }, resource: { status: 'captured', acl: ['__public__'] }, apiRule: api });
        if (isVisible(out.acl, who)) expect(isVisible(api.length ? [...api] : ['__private__'], who)).toBe(true);
      }),
    );
  });
});
