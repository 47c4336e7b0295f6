import { characterLength } from './text-length';
import { invalid } from './errors';

/**
 * Access control principals and visibility (spec "Access control: principals and rules" 1-10).
 * Pure functions: the search engine filters with `callerPrincipals` and the query path re-checks each
 * hit with `isVisible` against the authoritative read model.
 */
export const PUBLIC = '__public__';
export const PRIVATE = '__private__';
export const MAX_PRINCIPALS = 1000;
/** Entries a document ACL may list before normalization (duplicates, case variants, __public__, __private__). */
export const MAX_ACL_ENTRIES = 10 * MAX_PRINCIPALS;
export const MAX_PRINCIPAL_LENGTH = 256;

const EMAIL = /^[^\s@:]+@[^\s@:]+\.[^\s@:]+$/;
const DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;
const GROUP = /^group:[^:\s]+:\S+$/;

/**
 * An email a source gives for a person, as the `user_email:` principal it stands for; null when it is missing, not an
 * email address, or too long to store (a connector then counts the person as unresolved).
 */
export function emailPrincipal(email: string | null | undefined): string | null {
  const e = email?.trim().toLowerCase();
  if (!e || !EMAIL.test(e) || characterLength(e) + 'user_email:'.length > MAX_PRINCIPAL_LENGTH) return null;
  return `user_email:${e}`;
}

/** Normalizes one document principal; throws INVALID_INPUT for a malformed one (the whole request is rejected). */
export function normalizePrincipal(raw: unknown, field: string): string {
  if (typeof raw !== 'string') throw invalid(`${field} must be a string principal`);
  const p = raw.trim().toLowerCase();
  if (p.length === 0) throw invalid(`${field} is blank`);
  if (characterLength(p) > MAX_PRINCIPAL_LENGTH) throw invalid(`${field} is longer than ${MAX_PRINCIPAL_LENGTH} characters`);
  if (p === PUBLIC || p === PRIVATE) return p;
  if (p.startsWith('user_email:')) {
    if (!EMAIL.test(p.slice('user_email:'.length))) throw invalid(`${field} '${raw}' is not user_email:<email>`);
    return p;
  }
  if (p.startsWith('domain:')) {
    if (!DOMAIN.test(p.slice('domain:'.length))) throw invalid(`${field} '${raw}' is not domain:<domain>`);
    return p;
  }
  if (p.startsWith('group:')) {
    if (!GROUP.test(p)) throw invalid(`${field} '${raw}' is not group:<provider>:<id>`);
    return p;
  }
  if (EMAIL.test(p)) {
    // The limit holds for the stored form too.
    if (characterLength(p) + 'user_email:'.length > MAX_PRINCIPAL_LENGTH) throw invalid(`${field} is longer than ${MAX_PRINCIPAL_LENGTH} characters once stored as user_email:<email>`);
    return `user_email:${p}`;
  }
  throw invalid(`${field} '${raw}' is not a principal (user_email:<email>, an email, domain:<domain>, group:<provider>:<id>, __public__, __private__)`);
}

/**
 * The stored form of a document ACL (rules 1-5). `present` false = field absent = unrestricted (undefined).
 * `[]` or null = nobody = ['__private__']; `__public__` overrides the rest; `__private__` beside real principals is dropped.
 */
export function normalizeDocumentAcl(raw: unknown, present: boolean, field = 'acl'): string[] | undefined {
  if (!present) return undefined;
  if (raw === null) return [PRIVATE];
  if (!Array.isArray(raw)) throw invalid(`${field} must be an array of principals or null`);
  // The limit is on the principals the document holds, so it is counted after rules 1-3 (lowercased, trimmed,
  // deduplicated; __public__ overrides; __private__ next to real principals dropped). The raw list is bounded too,
  // so normalizing stays cheap.
  if (raw.length > MAX_ACL_ENTRIES) throw invalid(`${field} has more than ${MAX_ACL_ENTRIES} entries`);
  const set = [...new Set(raw.map((p, i) => normalizePrincipal(p, `${field}[${i}]`)))];
  if (set.includes(PUBLIC)) return [PUBLIC];
  const real = set.filter((p) => p !== PRIVATE);
  if (real.length > MAX_PRINCIPALS) throw invalid(`${field} has more than ${MAX_PRINCIPALS} principals (${real.length} after lowercasing, trimming and removing duplicates)`);
  return real.length ? real.sort() : [PRIVATE];
}

/**
 * The caller's principals for a query `acl` (rules 6-9). Returns null when no filtering applies (omitted or ["*"]).
 * Adds __public__; derives domain:<d> from each email; unrecognized entries are kept as is (they match nothing
 * but public content, so a typo narrows, never widens). `__private__` grants nothing beyond public content.
 */
export function callerPrincipals(raw: unknown): string[] | null {
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw)) throw invalid('acl must be an array of strings');
  if (raw.some((x) => typeof x !== 'string')) throw invalid('acl must be an array of strings');
  if (raw.length > MAX_PRINCIPALS) throw invalid(`acl has more than ${MAX_PRINCIPALS} entries`);
  const entries = (raw as string[]).map((s) => s.trim().toLowerCase()).filter((s) => s.length > 0);
  if (entries.length === 1 && entries[0] === '*') return null;
  const out = new Set<string>([PUBLIC]);
  for (const e of entries) {
    if (e === '*' || e === PRIVATE) continue;
    let p = e;
    if (EMAIL.test(e)) p = `user_email:${e}`;
    out.add(p);
    if (p.startsWith('user_email:')) {
      const email = p.slice('user_email:'.length);
      if (EMAIL.test(email)) out.add(`domain:${email.split('@')[1]}`);
    }
  }
  return [...out].sort();
}

/** Rule 7: absent or empty ACL, public, or an overlap with the caller. `caller` null = no filtering. */
export function isVisible(stored: string[] | undefined | null, caller: string[] | null): boolean {
  if (caller === null) return true;
  if (stored === undefined || stored === null || stored.length === 0) return true;
  if (stored.includes(PUBLIC)) return true;
  return stored.some((p) => p !== PRIVATE && caller.includes(p));
}

export interface VisibilityVerdict {
  visible: boolean;
  /** the spec rule that decided */
  rule: string;
  /** the caller principal that matched, when one did */
  matched?: string;
}

/** Like isVisible, but says which rule decided (for `crs audit visible`). */
export function explainVisibility(stored: string[] | undefined | null, caller: string[] | null): VisibilityVerdict {
  if (caller === null) return { visible: true, rule: 'rule 6/8: the query declares no acl (or ["*"]), so no filtering applies' };
  if (stored === undefined || stored === null) return { visible: true, rule: 'rule 4: the document has no acl (unrestricted)' };
  if (stored.length === 0) return { visible: true, rule: 'rule 7: the stored acl is empty' };
  if (stored.includes(PUBLIC)) return { visible: true, rule: 'rule 2/7: the document is __public__', matched: PUBLIC };
  if (stored.length === 1 && stored[0] === PRIVATE) return { visible: false, rule: 'rule 3/4: the document is __private__ (nobody)' };
  const hit = stored.find((p) => caller.includes(p));
  if (hit) return { visible: true, rule: hit.startsWith('domain:') ? 'rule 7: the caller email is under a listed domain' : 'rule 7: the acl lists one of the caller principals', matched: hit };
  return { visible: false, rule: 'rule 7: no caller principal is in the acl (unrecognized entries match only public content, rule 9)' };
}
