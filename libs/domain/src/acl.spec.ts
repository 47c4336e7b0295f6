import { callerPrincipals, isVisible, normalizeDocumentAcl, normalizePrincipal } from './acl';

describe('ACL principals', () => {
  it('normalizes: lowercase, trim, bare email to user_email:, dedupe', () => {
    expect(normalizeDocumentAcl(['  Bob@Example.com ', 'user_email:bob@example.com', 'DOMAIN:Example.com'], true)).toEqual(['domain:example.com', 'user_email:bob@example.com']);
  });
  it('absent = unrestricted; [] and null = __private__; __public__ overrides; __private__ beside real is dropped', () => {
    expect(normalizeDocumentAcl(undefined, false)).toBeUndefined();
    expect(normalizeDocumentAcl([], true)).toEqual(['__private__']);
    expect(normalizeDocumentAcl(null, true)).toEqual(['__private__']);
    expect(normalizeDocumentAcl(['a@b.co', '__public__'], true)).toEqual(['__public__']);
    expect(normalizeDocumentAcl(['__private__', 'a@b.co'], true)).toEqual(['user_email:a@b.co']);
  });
  it('rejects malformed principals and the limits', () => {
    for (const bad of ['nobody', 'user_email:nope', 'group:slack', 'domain:', '', 5]) expect(() => normalizePrincipal(bad, 'acl[0]')).toThrow();
    expect(() => normalizeDocumentAcl(['a@b.co'.padStart(300, 'x')], true)).toThrow(/256/);
    expect(() => normalizeDocumentAcl(Array.from({ length: 1001 }, (_, i) => `u${i}@x.io`), true)).toThrow(/1000/);
    expect(normalizeDocumentAcl(Array.from({ length: 1000 }, (_, i) => `u${i}@x.io`), true)).toHaveLength(1000);
    // The limit is on what the document holds: counted after deduplication and the __public__/__private__ rules.
    const thousand = Array.from({ length: 1000 }, (_, i) => `group:g:${i}`);
    expect(normalizeDocumentAcl([...thousand, 'GROUP:g:5 '], true)).toHaveLength(1000);
    expect(normalizeDocumentAcl([...thousand, '__private__'], true)).toHaveLength(1000);
    expect(normalizeDocumentAcl([...thousand, 'group:g:1000', '__public__'], true)).toEqual(['__public__']);
    expect(() => normalizeDocumentAcl([...thousand, 'group:g:1000', 'group:g:1000'], true)).toThrow(/more than 1000 principals \(1001 after/);
    expect(() => normalizeDocumentAcl(Array.from({ length: 10_001 }, () => 'group:g:1'), true)).toThrow(/more than 10000 entries/);
  });
  it('caller: omitted and ["*"] mean no filtering; adds __public__ and the email domain; keeps typos as is', () => {
    expect(callerPrincipals(undefined)).toBeNull();
    expect(callerPrincipals(['*'])).toBeNull();
    expect(callerPrincipals(['Ann@Corp.io'])).toEqual(['__public__', 'domain:corp.io', 'user_email:ann@corp.io']);
    expect(callerPrincipals(['__private__'])).toEqual(['__public__']);
    expect(callerPrincipals(['ann@corp'])).toEqual(['__public__', 'ann@corp']);
  });
  it('visibility rule 7', () => {
    const caller = callerPrincipals(['ann@corp.io'])!;
    expect(isVisible(undefined, caller)).toBe(true);
    expect(isVisible(['__public__'], caller)).toBe(true);
    expect(isVisible(['__private__'], caller)).toBe(false);
    expect(isVisible(['domain:corp.io'], caller)).toBe(true);
    expect(isVisible(['user_email:bob@corp.io'], caller)).toBe(false);
    expect(isVisible(['group:slack:eng'], caller)).toBe(false);
    expect(isVisible(['group:slack:eng'], callerPrincipals(['ann@corp.io', 'group:slack:eng']))).toBe(true);
    expect(isVisible(['__private__'], null)).toBe(true);
    expect(isVisible(['user_email:bob@corp.io'], callerPrincipals(['__private__']))).toBe(false);
  });
});
