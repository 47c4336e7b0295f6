import type { drive_v3 } from '@googleapis/drive';
import { emailPrincipal, MAX_PRINCIPAL_LENGTH, MAX_PRINCIPALS, PRIVATE, PUBLIC } from '@crs/domain/acl';
import type { PermissionCapture } from '../../provider.port';

/**
 * What Drive's grants on a file (or on a folder or shared drive) mean for search (access control rule 11, file drive):
 *
 * - `user` → `user_email:<email>`; `group` → `group:google:<email>` (Drive names a group by its email address; a
 *   caller lists its groups in a query's `acl` in that form); `domain` → `domain:<domain>`; `anyone` → `__public__`.
 * - Link-only grants (`anyone` or `domain` with `allowFileDiscovery: false`, Drive's "anyone with the link") grant
 *   nothing: Drive itself keeps such a file out of search for everyone who was not given the link, and this service
 *   cannot tell who was.
 * - Every role (reader, commenter, writer, owner, organizer) can read; a pending owner (`pendingOwner`) already holds
 *   a role and reads by it. Grants that open only a published view (`view`) grant nothing.
 * - A `user` or `group` grant whose email Drive does not show (no `emailAddress`, as for a hidden or external
 *   member), a grant of a deleted account (`deleted`: its address may name someone else by now), a value that is not
 *   an email or domain, or a type Drive has not documented, is unresolved: it is counted, never dropped, since
 *   dropping a reader changes who the list names. The readers cannot then be listed whole, so the capture carries no
 *   list but the count (`{acl: null, unresolved}`), and the API rule governs (with none, nobody reads it).
 * - More than 1,000 principals become one group principal naming the file's readers (`group:google:readers-of-<id>`)
 *   instead of a truncated list, which would be wrong for the readers left out.
 *
 * A file inherits its folders' grants and, in a shared drive, the drive's members. Every file carries its readers in
 * force (its own grants and the inherited ones) as its per-document permission, so its access never depends on the
 * resource's verdict, which may have been captured at another time, have failed, or be turned off. One case says
 * nothing of its own (`{acl: null}`): a file that is public only as its resource is, so that an API rule on the
 * resource narrows it as rule 12 asks of a provider verdict of public; the resource's verdict is then `__public__`
 * or that rule, never wider than the file.
 */
export type DrivePermission = drive_v3.Schema$Permission;

/** The permission fields a capture reads (a Drive `fields` mask). */
export const PERMISSION_FIELDS = 'id,type,role,emailAddress,domain,allowFileDiscovery,deleted,view';

const DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;

export interface GrantMapping {
  /** the principals in stored form (sorted; `['__public__']`; `['__private__']` for none), or null when a grant is unresolved */
  acl: string[] | null;
  /** grants that name no usable email or domain, or name a deleted account (0 for a public file, which they cannot narrow) */
  unresolved: number;
}

/** The principal one grant gives, `undefined` when it grants nothing, or `null` when it cannot be resolved. */
function principalOf(p: DrivePermission): string | null | undefined {
  if (p.view) return undefined;
  if (p.deleted) return null;
  const linkOnly = p.allowFileDiscovery === false;
  switch (p.type) {
    case 'anyone':
      return linkOnly ? undefined : PUBLIC;
    case 'domain': {
      if (linkOnly) return undefined;
      const domain = p.domain?.trim().toLowerCase();
      return domain && DOMAIN.test(domain) ? bounded(`domain:${domain}`) : null;
    }
    case 'user':
      return emailPrincipal(p.emailAddress);
    case 'group': {
      // A group is named by its email address, checked as a person's is.
      const asEmail = emailPrincipal(p.emailAddress);
      return asEmail === null ? null : bounded(`group:google:${asEmail.slice('user_email:'.length)}`);
    }
    default:
      return null;
  }
}

const bounded = (principal: string): string | null => ([...principal].length <= MAX_PRINCIPAL_LENGTH ? principal : null);

/** Drive's grants as principals in stored form (see above); none that lets anyone read is `['__private__']`. `readersId` names the group principal used past 1,000 principals. */
export function mapGrants(grants: readonly DrivePermission[], readersId: string): GrantMapping {
  const principals = new Set<string>();
  let unresolved = 0;
  for (const grant of grants) {
    const principal = principalOf(grant);
    if (principal === null) unresolved++;
    else if (principal !== undefined) principals.add(principal);
  }
  // A public grant opens the file whatever else is unresolved.
  if (principals.has(PUBLIC)) return { acl: [PUBLIC], unresolved: 0 };
  if (unresolved > 0) return { acl: null, unresolved };
  if (principals.size > MAX_PRINCIPALS) return { acl: [`group:google:readers-of-${readersId}`], unresolved };
  return { acl: principals.size ? [...principals].sort() : [PRIVATE], unresolved };
}

/** A capture of these readers: the principals, or the count of the readers that could not be named. */
export function captureOf(mapping: GrantMapping): PermissionCapture & { status: 'captured' } {
  return mapping.acl === null ? { status: 'captured', acl: null, unresolved: mapping.unresolved } : { status: 'captured', acl: mapping.acl };
}

/**
 * A file's per-document permission: its readers in force, always. A file that is public as its resource is
 * (`resource`, mapped the same way) says nothing of its own (`{acl: null}`), so the resource's public verdict, which
 * yields to an API rule (rule 12), decides; it cannot be wider than the file.
 */
export function filePermission(grants: readonly DrivePermission[], fileId: string, resource: GrantMapping): PermissionCapture {
  const mapping = mapGrants(grants, fileId);
  if (mapping.acl?.[0] === PUBLIC && resource.acl?.[0] === PUBLIC) return { status: 'captured', acl: null };
  return captureOf(mapping);
}
