import { PRIVATE, PUBLIC } from '../acl';

/**
 * Which access rule a synced document ends up with (access control rule 12, and the rule that a failed permission
 * capture never widens access).
 *
 * Three sources can speak about one synced document:
 * - the provider's per-document permission (a file's grants, a page's restrictions, an issue's security level);
 * - the provider's resource-level verdict (a channel's members, a repository's visibility, a space's viewers);
 * - the resource's `acl` set through the API.
 *
 * Precedence (rule 12): a per-document provider permission wins over everything; a provider verdict of public does
 * not override a rule set through the API; otherwise the provider's resource-level verdict wins over the API rule.
 * The "public does not override" clause is read as applying to the resource-level verdict: the per-document clause
 * comes first and says "everything", so a per-document permission decides even when it is public.
 *
 * A capture that failed falls back to the last verdict captured at that level; with none, the document is closed to
 * everyone (`__private__`), since the verdict that failed to arrive could have been narrower than anything else known.
 *
 * A capture that is restricted but cannot name everyone (members whose email the source hides: `unresolved` > 0, `acl`
 * null) falls back to the rule set through the API; with none, the document is closed: the source said it is not
 * open, so saying nothing (unrestricted) would widen it.
 *
 * Every ACL here is in stored form (`normalizeDocumentAcl`): `['__public__']`, `['__private__']`, or sorted
 * principals. An empty list is read as `['__private__']` (a provider or rule naming nobody), never as unrestricted.
 */
export type StoredAcl = readonly string[];

/** What capturing one level of provider permission produced. */
export type PermissionCapture =
  /** Capture is turned off for the provider, or the provider has no permissions to capture: it says nothing. */
  | { status: 'off' }
  /**
   * Captured. `acl` null: the provider has no permission at this level (no page restriction, say), or, with
   * `unresolved` > 0, a restriction it cannot express because that many members could not be named (hidden emails).
   */
  | { status: 'captured'; acl: StoredAcl | null; unresolved?: number }
  /** The capture failed. `last`: the last successful capture at this level, when there was one. */
  | { status: 'failed'; last?: { acl: StoredAcl | null; unresolved?: number } };

export interface AccessPrecedenceInput {
  document: PermissionCapture;
  resource: PermissionCapture;
  /** The resource's `acl` set through the API, in stored form; undefined when none is set. */
  apiRule: StoredAcl | undefined;
}

export type AccessDecidedBy =
  | 'document-permission'
  | 'resource-permission'
  | 'api-rule'
  | 'api-rule-over-public-provider-verdict'
  | 'failed-capture-closed'
  | 'unresolved-members-closed'
  | 'unrestricted';

export interface EffectiveAccess {
  /** The document's stored ACL; undefined is unrestricted (rule 4: no rule from anywhere). */
  acl: string[] | undefined;
  decidedBy: AccessDecidedBy;
  /** true when the deciding provider verdict is a last capture kept after a failed one */
  fromLastCapture: boolean;
}

type Resolved = { kind: 'says-nothing' } | { kind: 'acl'; acl: string[]; fromLast: boolean } | { kind: 'closed' } | { kind: 'rule-or-closed'; fromLast: boolean };

function resolveCaptured(c: { acl: StoredAcl | null; unresolved?: number }, fromLast: boolean): Resolved {
  if (c.acl !== null) return { kind: 'acl', acl: stored(c.acl), fromLast };
  return (c.unresolved ?? 0) > 0 ? { kind: 'rule-or-closed', fromLast } : { kind: 'says-nothing' };
}

function resolve(capture: PermissionCapture): Resolved {
  switch (capture.status) {
    case 'off':
      return { kind: 'says-nothing' };
    case 'captured':
      return resolveCaptured(capture, false);
    case 'failed':
      return capture.last ? resolveCaptured(capture.last, true) : { kind: 'closed' };
  }
}

function stored(acl: StoredAcl): string[] {
  return acl.length === 0 ? [PRIVATE] : [...acl];
}

const isPublic = (acl: StoredAcl) => acl.includes(PUBLIC);

export function effectiveAccess(input: AccessPrecedenceInput): EffectiveAccess {
  const closed: EffectiveAccess = { acl: [PRIVATE], decidedBy: 'failed-capture-closed', fromLastCapture: false };
  const api = input.apiRule === undefined ? undefined : stored(input.apiRule);
  // Restricted, but not every member could be named: the API rule governs; with none, nobody.
  const ruleOrClosed = (fromLast: boolean): EffectiveAccess =>
    api !== undefined ? { acl: api, decidedBy: 'api-rule', fromLastCapture: false } : { acl: [PRIVATE], decidedBy: 'unresolved-members-closed', fromLastCapture: fromLast };
  const doc = resolve(input.document);
  if (doc.kind === 'closed') return closed;
  if (doc.kind === 'acl') return { acl: doc.acl, decidedBy: 'document-permission', fromLastCapture: doc.fromLast };
  if (doc.kind === 'rule-or-closed') return ruleOrClosed(doc.fromLast);

  const resource = resolve(input.resource);
  if (resource.kind === 'closed') return closed;
  if (resource.kind === 'rule-or-closed') return ruleOrClosed(resource.fromLast);
  if (resource.kind === 'acl') {
    if (isPublic(resource.acl) && api !== undefined) return { acl: api, decidedBy: 'api-rule-over-public-provider-verdict', fromLastCapture: false };
    return { acl: resource.acl, decidedBy: 'resource-permission', fromLastCapture: resource.fromLast };
  }
  if (api !== undefined) return { acl: api, decidedBy: 'api-rule', fromLastCapture: false };
  return { acl: undefined, decidedBy: 'unrestricted', fromLastCapture: false };
}
