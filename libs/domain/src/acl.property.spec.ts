import fc from 'fast-check';
import { callerPrincipals, isVisible, normalizeDocumentAcl } from './acl';

/**
 * A small reference model of access-control rules 1-10, written straight from the spec and independently of
 * acl.ts, checked against the implementation on random documents and callers.
 */
const reference = {
  /** rules 1, 3, 4, 2: returns the stored form, or 'unrestricted'. */
  stamp(raw: string[] | null | undefined): 'unrestricted' | string[] {
    if (raw === undefined) return 'unrestricted';
    if (raw === null || raw.length === 0) return ['__private__'];
    const norm = raw.map((p) => {
      const s = p.trim().toLowerCase();
      return s.includes('@') && !s.includes(':') ? `user_email:${s}` : s;
    });
    if (norm.includes('__public__')) return ['__public__'];
    const real = [...new Set(norm.filter((p) => p !== '__private__'))];
    return real.length ? real : ['__private__'];
  },
  /** rules 6-9: principals the caller holds, or 'all' for no filtering. */
  caller(raw: string[] | undefined): 'all' | Set<string> {
    if (raw === undefined) return 'all';
    const entries = raw.map((s) => s.trim().toLowerCase()).filter(Boolean);
    if (entries.length === 1 && entries[0] === '*') return 'all';
    const out = new Set(['__public__']);
    for (const e of entries) {
      if (e === '*' || e === '__private__') continue;
      if (/^[^\s@:]+@[^\s@:]+\.[^\s@:]+$/.test(e)) {
        out.add(`user_email:${e}`);
        out.add(`domain:${e.split('@')[1]}`);
      } else {
        out.add(e);
        if (e.startsWith('user_email:')) out.add(`domain:${e.split('@')[1]}`);
      }
    }
    return out;
  },
  /** rule 7 */
  visible(doc: 'unrestricted' | string[], caller: 'all' | Set<string>): boolean {
    if (caller === 'all' || doc === 'unrestricted') return true;
    if (doc.includes('__public__')) return true;
    return doc.some((p) => caller.has(p));
  },
};

const emails = ['ann@corp.io', 'Bob@Corp.io', ' eve@else.org ', 'dan@corp.io'];
const principal = fc.constantFrom(
  ...emails,
  'user_email:ann@corp.io',
  'USER_EMAIL:dan@corp.io',
  'domain:corp.io',
  'domain:else.org',
  'group:slack:eng',
  'group:drive:ops',
  '__public__',
  '__private__',
);
const callerEntry = fc.constantFrom(...emails, 'domain:corp.io', 'group:slack:eng', 'group:drive:ops', '__private__', '*', 'ann@corp', 'nobody', 'user_email:dan@corp.io');

describe('ACL rules 1-10 against a reference model', () => {
  it('stamping, caller derivation and visibility agree with the model', () => {
    fc.assert(
      fc.property(fc.option(fc.array(principal, { maxLength: 6 }), { nil: undefined }), fc.boolean(), fc.option(fc.array(callerEntry, { maxLength: 4 }), { nil: undefined }), (docAcl, nullInstead, callerRaw) => {
        const raw = nullInstead && docAcl !== undefined && docAcl.length === 0 ? null : docAcl;
        const stored = normalizeDocumentAcl(raw, raw !== undefined);
        const model = reference.stamp(raw ?? (raw === null ? null : undefined));
        expect(stored === undefined ? 'unrestricted' : [...stored].sort()).toEqual(model === 'unrestricted' ? 'unrestricted' : [...model].sort());
        const caller = callerPrincipals(callerRaw);
        const modelCaller = reference.caller(callerRaw);
        expect(caller === null ? 'all' : new Set(caller)).toEqual(modelCaller);
        expect(isVisible(stored, caller)).toBe(reference.visible(model, modelCaller));
      }),
      { numRuns: 2000 },
    );
  });

  it('a metadata-independent property: adding entries to the caller never hides a visible document, except "*" alone lifting filtering', () => {
    fc.assert(
      fc.property(fc.array(principal, { minLength: 1, maxLength: 5 }), fc.array(callerEntry.filter((e) => e !== '*'), { minLength: 1, maxLength: 3 }), fc.array(callerEntry.filter((e) => e !== '*'), { maxLength: 3 }), (docAcl, callerA, extra) => {
        const stored = normalizeDocumentAcl(docAcl, true);
        if (isVisible(stored, callerPrincipals(callerA))) expect(isVisible(stored, callerPrincipals([...callerA, ...extra]))).toBe(true);
      }),
    );
  });

  it('a typo never widens: an unrecognized entry sees exactly what __private__ sees', () => {
    fc.assert(
      fc.property(fc.array(principal, { maxLength: 5 }), fc.constantFrom('ann@corp', 'nobody', 'grp:eng', 'domain'), (docAcl, typo) => {
        const stored = normalizeDocumentAcl(docAcl, true);
        expect(isVisible(stored, callerPrincipals([typo]))).toBe(isVisible(stored, callerPrincipals(['__private__'])));
      }),
    );
  });
});
