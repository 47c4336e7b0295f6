import { createHash } from 'node:crypto';
import type { Models } from 'confluence.js';
import { emailPrincipal, MAX_PRINCIPALS, normalizeDocumentAcl, PUBLIC } from '@crs/domain/acl';
import type { PermissionCapture } from '../../provider.port';

/**
 * Who may read a space or a page, as Confluence decides it, turned into principals (docs/providers/confluence.md,
 * "Permission capture").
 *
 * A level is one set of readers: the space's read permission (users, groups, anonymous access) or one page's read
 * restriction (users and groups). A page is readable by whoever passes the space and every restriction on the page
 * and on each of its ancestors (a restriction on a page applies to everything under it), so a page's readers are the
 * intersection of those levels, computed over Atlassian account ids with every group expanded into its members.
 */

/** One set of readers as Confluence lists it. */
export interface ReaderLevel {
  anonymous: boolean;
  users: Models.User[];
  groupIds: string[];
}

/** A group's members as far as they were read; `complete` false when the group is larger than the expansion cap. */
export interface GroupMembers {
  members: Models.User[];
  complete: boolean;
}

export type GroupSource = (groupId: string) => Promise<GroupMembers>;

/** The outcome of turning a set of readers into principals. */
export interface RenderedReaders {
  /** stored form: `['__public__']`, or sorted principals, or `['__private__']` for nobody; null: more than 1,000 needed */
  acl: string[] | null;
  /** readers whose email Confluence hides (privacy settings) and that no group principal covers */
  unresolved: number;
}

export const GROUP_PREFIX = 'group:confluence:';

/**
 * Whether an account may still sign in: users listed on their own carry `accountStatus` (`active`, `inactive`,
 * `closed`), a group's member listing carries `isActive`. A deactivated or closed account reads nothing, so it is no
 * reader; one whose answer says neither is taken as active.
 */
export function isActiveAccount(user: Models.User & { accountStatus?: unknown; isActive?: unknown }): boolean {
  return (user.accountStatus === undefined || user.accountStatus === 'active') && user.isActive !== false;
}


/** The space's read permission, from `space?expand=permissions`: every `read` permission's subjects together. */
export function spaceReadLevel(space: Models.Space): ReaderLevel {
  const level: ReaderLevel = { anonymous: false, users: [], groupIds: [] };
  for (const p of space.permissions ?? []) {
    if (p.operation?.operation !== 'read' || (p.operation.targetType && p.operation.targetType !== 'space')) continue;
    if (p.anonymousAccess) level.anonymous = true;
    level.users.push(...(p.subjects?.user?.results ?? []));
    level.groupIds.push(...(p.subjects?.group?.results ?? []).map((g) => g.id));
  }
  return level;
}

/**
 * Whether a space's read permission names no reader at all: no user, no group, no anonymous access. The connector's
 * own account reads the space, so such an answer is not "nobody": Confluence lists a space's permissions only to an
 * account that may see them, and to any other answers an empty list.
 */
export function namesNoReader(level: ReaderLevel): boolean {
  return !level.anonymous && level.users.length === 0 && level.groupIds.length === 0;
}

/** A page's own read restriction; null when it has none (no user and no group listed). */
export function restrictionLevel(restriction: Models.ContentRestriction | undefined): ReaderLevel | null {
  const users = restriction?.restrictions?.user?.results ?? [];
  const groupIds = (restriction?.restrictions?.group?.results ?? []).map((g) => g.id);
  return users.length === 0 && groupIds.length === 0 ? null : { anonymous: false, users, groupIds };
}

/**
 * Expands levels into account ids and renders principals, reading each group once (a cache of the provider call).
 */
export class ReaderResolver {
  private readonly groups = new Map<string, Promise<GroupMembers>>();
  private readonly emails = new Map<string, string>();

  constructor(private readonly source: GroupSource) {}

  private group(id: string): Promise<GroupMembers> {
    let found = this.groups.get(id);
    if (!found) {
      found = this.source(id);
      this.groups.set(id, found);
    }
    return found;
  }

  private remember(users: Models.User[]): void {
    for (const u of users) if (!this.emails.has(u.accountId)) this.emails.set(u.accountId, u.email ?? '');
  }

  /**
   * The account ids a level admits (its active direct users and the active members of its groups); partial when a
   * group is. A level whose users are all deactivated still restricts: it admits nobody.
   */
  private async accounts(level: ReaderLevel): Promise<Set<string>> {
    this.remember(level.users);
    const ids = new Set(level.users.filter(isActiveAccount).map((u) => u.accountId));
    for (const g of level.groupIds) {
      const { members } = await this.group(g);
      this.remember(members);
      for (const m of members) if (isActiveAccount(m)) ids.add(m.accountId);
    }
    return ids;
  }

  /**
   * The space's readers (the resource-level verdict): `__public__` with anonymous access; otherwise every reader's
   * email. Past 1,000 principals the space's groups are named as `group:confluence:<id>` instead of their members,
   * and a group larger than the expansion cap always is (its members could not all be read).
   */
  async spaceReaders(space: ReaderLevel): Promise<RenderedReaders> {
    if (space.anonymous) return { acl: [PUBLIC], unresolved: 0 };
    const accounts = await this.accounts(space);
    const groups = await Promise.all([...new Set(space.groupIds)].map(async (id) => ({ id, ...(await this.group(id)) })));
    return this.render(accounts, groups, groups.filter((g) => !g.complete));
  }

  /**
   * A page's readers when a restriction applies to it: the intersection of the space's readers and of every
   * restriction on the page and its ancestors (`chain`, the restricted levels only). Null when nothing restricts it:
   * the page then follows the space (the resource-level verdict).
   */
  async pageReaders(space: ReaderLevel, chain: ReaderLevel[]): Promise<RenderedReaders | null> {
    if (chain.length === 0) return null;
    const levels = space.anonymous ? chain : [space, ...chain];
    let readers: Set<string> | undefined;
    for (const level of levels) {
      const ids = await this.accounts(level);
      readers = readers === undefined ? ids : new Set([...readers].filter((id) => ids.has(id)));
    }
    // A group may stand for its members only when every one of them passes every level: read in full, and all in.
    const named = [...new Set(levels.flatMap((l) => l.groupIds))];
    const groups = await Promise.all(named.map(async (id) => ({ id, ...(await this.group(id)) })));
    const usable = groups.filter((g) => g.complete && g.members.filter(isActiveAccount).every((m) => readers!.has(m.accountId)));
    return this.render(readers!, usable, []);
  }

  /**
   * Principals for a set of account ids: their emails while they fit in 1,000 principals; past that, groups stand
   * for their members (those in `forced` always, then the largest of `usable` first) until the rest fits. Null when
   * even that leaves more than 1,000.
   */
  private render(accounts: Set<string>, usable: { id: string; members: Models.User[] }[], forced: { id: string; members: Models.User[] }[]): RenderedReaders {
    const chosen = [...forced];
    const remaining = new Set(accounts);
    for (const g of forced) for (const m of g.members) remaining.delete(m.accountId);
    const count = () => chosen.length + remaining.size;
    if (count() > MAX_PRINCIPALS) {
      for (const g of [...usable].sort((a, b) => b.members.length - a.members.length)) {
        if (chosen.some((c) => c.id === g.id) || !g.members.some((m) => remaining.has(m.accountId))) continue;
        chosen.push(g);
        for (const m of g.members) remaining.delete(m.accountId);
        if (count() <= MAX_PRINCIPALS) break;
      }
    }
    if (count() > MAX_PRINCIPALS) return { acl: null, unresolved: 0 };
    const principals = chosen.map((g) => `${GROUP_PREFIX}${g.id}`);
    let unresolved = 0;
    for (const id of remaining) {
      const principal = emailPrincipal(this.emails.get(id));
      if (principal) principals.push(principal);
      else unresolved++;
    }
    return { acl: normalizeDocumentAcl(principals, true)!, unresolved };
  }
}

/** The per-document permission a page's rendered readers give. */
export function pagePermission(readers: RenderedReaders | null): PermissionCapture {
  if (readers === null) return { status: 'captured', acl: null };
  // More readers than a document may list, even with groups standing for members: closed, never wider.
  if (readers.acl === null) return { status: 'failed' };
  return { status: 'captured', acl: readers.acl };
}

/** A short digest of a per-document permission, kept in the cursor to tell a restriction change on the next sweep. */
export function permissionDigest(permission: PermissionCapture): string {
  return createHash('sha256').update(JSON.stringify(permission)).digest('base64url').slice(0, 12);
}
