import { createHash } from 'node:crypto';
import type { Version3Models } from 'jira.js';
import { HttpException } from 'jira.js';
import { emailPrincipal, MAX_PRINCIPALS, PRIVATE, PUBLIC } from '@crs/domain/acl';
import { ProviderError, ScopeError } from '../../provider-errors';
import type { PermissionCapture, StoredAcl } from '../../provider.port';
import type { JiraApi } from './jira-api';
import type { SearchedIssue } from './jira-content';

/** A permission holder as Jira sends it with `expand=user`: the user's details (email when visible) beside the id. */
type ExpandedHolder = Version3Models.PermissionHolder & { user?: Version3Models.User };


/** Who a set of grants reaches, as far as Jira lets the connector tell. */
export interface Holders {
  /** `anyone`: the grant is public */
  public: boolean;
  /** user grants, by email */
  emails: Set<string>;
  /** group grants: each group's members' emails */
  groups: Map<string, string[]>;
  /** principals standing for a set Jira does not list (every user of an application role) */
  principals: Set<string>;
  /**
   * people granted whose email Jira hides (each once, however many grants reach them), and grants of a kind that
   * names nobody the connector can list
   */
  unresolved: number;
  /** per-issue grants of a security level: the issue's reporter, its assignee */
  reporter: boolean;
  assignee: boolean;
}

const emptyHolders = (): Holders => ({ public: false, emails: new Set(), groups: new Map(), principals: new Set(), unresolved: 0, reporter: false, assignee: false });

const userPrincipal = (email: string | undefined): string | undefined => emailPrincipal(email) ?? undefined;

/**
 * The principal of a set of people of one Jira site: `group:jira:<host>:<id>`. The site's host is part of it, so two
 * sites (two connectors) never share a principal, whatever their groups are called.
 */
export const sitePrincipal = (host: string, id: string) => `group:jira:${host.toLowerCase()}:${id.toLowerCase()}`;

/** A group's active members: the principals of those whose email is visible, the account ids of those whose is hidden. */
interface GroupMembers {
  emails: string[];
  hidden: string[];
}

/**
 * The members of groups, the details of users, the actors of project roles, a project's browse grants and its lead,
 * each read once per provider call and kept for that call only: groups are paged from /group/member (active users
 * only), a user a grant names without details from /user, a role's actors in a project from
 * /project/{key}/role/{id} (active users only), the grants from /project/{key}/permissionscheme, the lead from
 * /project/{key}.
 */
export class Directory {
  private readonly groups = new Map<string, Promise<GroupMembers>>();
  private readonly users = new Map<string, Promise<Version3Models.User>>();
  private readonly roles = new Map<string, Promise<Version3Models.RoleActor[]>>();
  private readonly grants = new Map<string, Promise<ExpandedHolder[]>>();
  private readonly leads = new Map<string, Promise<string | undefined>>();

  constructor(private readonly api: JiraApi) {}

  /** The host of the site, which every group principal of this site carries. */
  get host(): string {
    return this.api.site.host;
  }

  groupMembers(groupId: string): Promise<GroupMembers> {
    let members = this.groups.get(groupId);
    if (!members) {
      members = this.readGroup(groupId);
      this.groups.set(groupId, members);
    }
    return members;
  }

  /** The holders of BROWSE_PROJECTS in the project's permission scheme (users expanded). */
  browseGrants(projectKey: string): Promise<ExpandedHolder[]> {
    let grants = this.grants.get(projectKey);
    if (!grants) {
      grants = this.api
        .call(`reading the permission scheme of project ${projectKey}`, (c) => c.projectPermissionSchemes.getAssignedPermissionScheme({ projectKeyOrId: projectKey, expand: 'permissions,user,group' }), true)
        .then((scheme) => (scheme.permissions ?? []).filter((p) => p.permission === 'BROWSE_PROJECTS' && p.holder).map((p) => p.holder as ExpandedHolder));
      this.grants.set(projectKey, grants);
    }
    return grants;
  }

  /** The account id of the project's lead (`GET project/{key}`), whom a `projectLead` grant names. */
  projectLead(projectKey: string): Promise<string | undefined> {
    let lead = this.leads.get(projectKey);
    if (!lead) {
      lead = this.api.call(`reading the lead of project ${projectKey}`, (c) => c.projects.getProject({ projectIdOrKey: projectKey, expand: 'lead' }), true).then((p) => p.lead?.accountId);
      this.leads.set(projectKey, lead);
    }
    return lead;
  }

  /** A user's details: the email when visible, and whether the account is active. */
  user(accountId: string): Promise<Version3Models.User> {
    let user = this.users.get(accountId);
    if (!user) {
      user = this.api.call(`reading the user ${accountId}`, (c) => c.users.getUser({ accountId }));
      this.users.set(accountId, user);
    }
    return user;
  }

  /**
   * Who acts in a project role in one project: users (by account id; the role carries no email) and groups (by id).
   * Jira answers 404 both when the role is gone and when the account lacks Administer Projects (or Administer Jira),
   * which reading the permission scheme needs as well; either way who holds the grant is not known, so it is a
   * ScopeError that says both.
   */
  roleActors(projectKey: string, roleId: number): Promise<Version3Models.RoleActor[]> {
    const key = `${projectKey}/${roleId}`;
    let actors = this.roles.get(key);
    if (!actors) {
      const what = `reading the project role ${roleId} of project ${projectKey}`;
      actors = this.api.call(what, (c) => c.projectRoles.getProjectRole({ projectIdOrKey: projectKey, id: roleId, excludeInactiveUsers: true })).then(
        (role) => role.actors ?? [],
        (err: unknown) => {
          if (err instanceof ProviderError && err.cause instanceof HttpException && err.cause.status === 404) {
            throw new ScopeError(`Jira answered 404 while ${what} on ${this.api.site.baseUrl}: the account lacks Administer Projects for the project (or Administer Jira), or the role was deleted. Give the account the permission; who holds a grant to the role is not known until then.`, { cause: err.cause });
          }
          throw err;
        },
      );
      this.roles.set(key, actors);
    }
    return actors;
  }

  private async readGroup(groupId: string): Promise<GroupMembers> {
    const emails: string[] = [];
    const hidden: string[] = [];
    const guard = this.api.pages(`the members of group ${groupId}`);
    for (let startAt = 0; ; guard.next(startAt)) {
      this.api.checkAborted();
      const page = await this.api.call(`reading the members of group ${groupId}`, (c) => c.groups.getUsersFromGroup({ groupId, startAt, maxResults: 50, includeInactiveUsers: false }));
      const values = page.values ?? [];
      for (const user of values) {
        // A deactivated account may sign in nowhere: it is granted nothing, whatever the listing holds.
        if (user.active === false) continue;
        const principal = userPrincipal(user.emailAddress);
        if (principal) emails.push(principal);
        // A member without an account id still counts, as someone no other grant can be matched with.
        else hidden.push(user.accountId ?? `${groupId}#${startAt}:${hidden.length}`);
      }
      startAt += values.length;
      if (page.isLast !== false || values.length === 0) return { emails, hidden };
    }
  }
}

/**
 * Who the grants of a project reach. `user` and `group` are listed (groups expanded to their members); a
 * `projectRole` is its actors in the project (`GET project/{key}/role/{id}`), each user and group listed as if granted
 * directly; `anyone` is public; an application role (every user licensed for Jira, or for one product) is the principal
 * `group:jira:<host>:app:<key>` (`app:any` for every user of any application), never public, which a caller declares;
 * the project lead is the user `GET project/{key}` names; the issue's reporter and assignee are noted for security
 * levels. Every other kind (custom fields, a kind Jira adds later) and a role actor of another kind count as
 * unresolved: the grant is not widened to anyone. A person whose email is hidden counts once, however many grants
 * reach them.
 */
export async function resolveHolders(holders: ExpandedHolder[], directory: Directory, projectKey: string): Promise<Holders> {
  const out = emptyHolders();
  const hidden = new Set<string>();
  let other = 0;
  const addUser = async (accountId: string | undefined, details?: Version3Models.User) => {
    // Jira names a role actor whose record was deleted `unknown`: nobody to look up.
    const known = accountId && accountId !== 'unknown' ? accountId : undefined;
    const user = details ?? (known ? await directory.user(known) : undefined);
    // A deactivated account may sign in nowhere: it is granted nothing (and is not someone left unnamed either).
    if (user?.active === false) return;
    const principal = userPrincipal(user?.emailAddress);
    if (principal) out.emails.add(principal);
    else if (known) hidden.add(known);
    else other++;
  };
  const addGroup = async (groupId: string | undefined) => {
    if (!groupId) {
      other++;
      return;
    }
    const members = await directory.groupMembers(groupId);
    out.groups.set(groupId, members.emails);
    for (const accountId of members.hidden) hidden.add(accountId);
  };
  for (const holder of holders) {
    switch (holder.type) {
      case 'anyone':
        out.public = true;
        break;
      case 'applicationRole':
        out.principals.add(sitePrincipal(directory.host, `app:${holder.parameter || 'any'}`));
        break;
      case 'user':
        await addUser(holder.value ?? holder.parameter, holder.user);
        break;
      case 'projectLead':
        await addUser(await directory.projectLead(projectKey));
        break;
      case 'group':
        await addGroup(holder.value);
        break;
      case 'projectRole': {
        const roleId = holder.value ?? holder.parameter;
        if (!roleId || !/^\d+$/.test(roleId)) {
          other++;
          break;
        }
        for (const actor of await directory.roleActors(projectKey, Number(roleId))) {
          if (actor.type === 'atlassian-user-role-actor') await addUser(actor.actorUser?.accountId);
          else if (actor.type === 'atlassian-group-role-actor') await addGroup(actor.actorGroup?.groupId);
          else other++;
        }
        break;
      }
      case 'reporter':
        out.reporter = true;
        break;
      case 'assignee':
        out.assignee = true;
        break;
      default:
        other++;
    }
  }
  out.unresolved = hidden.size + other;
  return out;
}

/** Who a browse grant of the issue's own people reaches in one issue: its reporter, its assignee, a user-picker field's users. */
export interface IssueGrants {
  reporter: boolean;
  assignee: boolean;
  /** ids of user-picker custom fields (`customfield_10010`) whose users may browse the issue */
  userFields: string[];
}

/** Browse holders that grant per issue, to the people the issue itself names. */
const ISSUE_HOLDERS = new Set(['reporter', 'assignee', 'userCustomField']);

/**
 * Browse holders that grant per issue under a condition the connector cannot check (the reporter with the create
 * permission, the assignee with the assignable permission, the groups a group-picker field names): left out, which
 * only narrows.
 */
const NARROWED_HOLDERS = new Set(['reporterWithCreatePermission', 'assigneeWithAssignablePermission', 'groupCustomField']);

export function issueGrantsOf(holders: ExpandedHolder[]): IssueGrants {
  const fields = holders.filter((h) => h.type === 'userCustomField').map((h) => h.parameter ?? h.value ?? '');
  return {
    reporter: holders.some((h) => h.type === 'reporter'),
    assignee: holders.some((h) => h.type === 'assignee'),
    userFields: [...new Set(fields.filter((f) => /^customfield_\d+$/.test(f)))].sort(),
  };
}

export const grantsPerIssue = (grants: IssueGrants) => grants.reporter || grants.assignee || grants.userFields.length > 0;

/** The people an issue names whom the issue grants reach, by principal, and how many of them hide their email. */
function issuePeople(grants: IssueGrants, issue: SearchedIssue): { principals: Set<string>; unresolved: number } {
  const fields = issue.fields as Record<string, unknown>;
  const named: unknown[] = [];
  if (grants.reporter) named.push(issue.fields.reporter);
  if (grants.assignee) named.push(issue.fields.assignee);
  for (const field of grants.userFields) named.push(...(Array.isArray(fields[field]) ? (fields[field] as unknown[]) : [fields[field]]));
  const principals = new Set<string>();
  const hidden = new Set<string>();
  for (const value of named) {
    if (!value || typeof value !== 'object') continue;
    const user = value as Version3Models.UserDetails;
    if (user.active === false) continue;
    const principal = userPrincipal(user.emailAddress);
    if (principal) principals.add(principal);
    else hidden.add(user.accountId ?? `#${hidden.size}`);
  }
  return { principals, unresolved: hidden.size };
}

/**
 * The per-document permission of an issue without a security level when browse access also goes to people the issue
 * names (its reporter, its assignee, a user-picker field's users): the project's list plus them. None when the
 * project's grants name no such people, when the project is public, or when its verdict is left to the resource's rule
 * (the issue follows that rule, which only narrows); past 1,000 principals the project's list alone, with the issue's
 * people counted unresolved. A person whose email is hidden is counted unresolved.
 */
export function issueBrowsePermission(browse: BrowseAccess, issue: SearchedIssue): PermissionCapture | undefined {
  if (!grantsPerIssue(browse.issueGrants) || browse.acl === null || browse.acl.includes(PUBLIC)) return undefined;
  const people = issuePeople(browse.issueGrants, issue);
  if (people.principals.size === 0 && people.unresolved === 0) return undefined;
  const base = browse.acl.filter((p) => p !== PRIVATE);
  const acl = new Set([...base, ...people.principals]);
  if (acl.size > MAX_PRINCIPALS) return { status: 'captured', acl: base.length ? [...base] : [PRIVATE], unresolved: people.unresolved + acl.size - base.length };
  const counted = people.unresolved > 0 ? { unresolved: people.unresolved } : {};
  return { status: 'captured', acl: acl.size ? [...acl].sort() : [PRIVATE], ...counted };
}

/**
 * The stored ACL of resolved holders (plus `extra` principals). Public wins; nobody is `__private__`. Groups are
 * expanded to their members' emails while the whole list fits the 1,000 principals a document may hold; past that
 * each group is its `group:jira:<host>:<groupId>` principal, and if even that is too many, the one principal `fallback`
 * stands for them all: never a truncated list.
 */
export function holdersAcl(holders: Holders, host: string, fallback: string, extra: Iterable<string> = []): string[] {
  if (holders.public) return [PUBLIC];
  const direct = new Set([...holders.emails, ...holders.principals, ...extra]);
  const expanded = new Set([...direct, ...[...holders.groups.values()].flat()]);
  if (expanded.size === 0) return [PRIVATE];
  if (expanded.size <= MAX_PRINCIPALS) return [...expanded].sort();
  const compact = new Set([...direct, ...[...holders.groups.keys()].map((id) => sitePrincipal(host, id))]);
  if (compact.size <= MAX_PRINCIPALS) return [...compact].sort();
  return [fallback];
}

/** The resource-level verdict of a project: who holds BROWSE_PROJECTS, with what the connector could not resolve. */
export interface BrowseAccess {
  /** null: some holder could not be resolved to an email, so the resource's own rule governs */
  acl: StoredAcl | null;
  principals: number;
  unresolved: number;
  holders: Holders;
  /** the grants to the people each issue names, which the resource-level verdict leaves out */
  issueGrants: IssueGrants;
}

/**
 * BROWSE_PROJECTS of the project's permission scheme. A holder whose email Jira hides (or a grant that names people
 * the connector cannot list) makes the verdict `acl` null with the unresolved count: the resource's `acl` rule governs
 * its issues then (with none, nobody sees them), rather than a list that leaves those people out.
 */
export async function browseAccess(api: JiraApi, projectKey: string, directory = new Directory(api)): Promise<BrowseAccess> {
  const grants = await directory.browseGrants(projectKey);
  // Grants to the people each issue names are not resource-wide: they go into each issue's own permission.
  const holders = await resolveHolders(grants.filter((h) => !ISSUE_HOLDERS.has(h.type) && !NARROWED_HOLDERS.has(h.type)), directory, projectKey);
  const acl = holdersAcl(holders, api.site.host, sitePrincipal(api.site.host, `browse:${projectKey}`));
  // A public grant reaches everyone, the people the connector cannot name included.
  const unresolved = holders.public ? 0 : holders.unresolved;
  return { acl: unresolved > 0 ? null : acl, principals: acl[0] === PUBLIC || acl[0] === PRIVATE ? 0 : acl.length, unresolved, holders, issueGrants: issueGrantsOf(grants) };
}

/**
 * Whether a person (by principal) may browse the project, whatever the issue: anyone may when the grant is public; a
 * person named by email may when the grant goes to the users of an application role (a person a level names is a user
 * of the site); otherwise the resolved users and group members may. People Jira hides are not known, so they are not
 * let through.
 */
function browsePasses(browse: Holders): (principal: string) => boolean {
  if (browse.public || browse.principals.size > 0) return () => true;
  const members = new Set([...browse.emails, ...[...browse.groups.values()].flat()]);
  return (principal) => members.has(principal);
}

/** Everyone the project's browse grants reach, as principals (an application role as its principal); null when public. */
function browsePrincipals(browse: Holders): Set<string> | null {
  if (browse.public) return null;
  return new Set([...browse.emails, ...[...browse.groups.values()].flat(), ...browse.principals]);
}

interface LevelRule {
  name: string;
  holders: Holders;
  /** the level's people who may also browse the project, as principals; `public` when both are public */
  people: Set<string> | 'public';
  /** the level's people by principal, whether or not they may browse the project */
  members: Set<string>;
  /** changes exactly when who may see the level's issues changes */
  digest: string;
}

/**
 * The issue security levels of a project and who may see each level's issues: read once per sync, when an issue
 * with a level is met or a level's issues were synced before (to find membership changes, which move no issue). Jira
 * shows an issue with a level to those who are members of the level AND may browse the project, so the project's
 * browse grants are read with the levels.
 */
export class SecurityLevels {
  private levels: Map<string, LevelRule> | undefined;
  private browse: (principal: string) => boolean = () => false;
  private browseGrants: BrowseAccess | undefined;
  /** why the levels could not be read (the account lacks Administer Jira), when they could not */
  refused: Error | undefined;

  constructor(
    private readonly api: JiraApi,
    private readonly projectKey: string,
    private readonly directory: Directory,
    private readonly readBrowse: () => Promise<BrowseAccess> = () => browseAccess(api, projectKey, directory),
  ) {}

  async load(): Promise<void> {
    if (this.levels !== undefined || this.refused !== undefined) return;
    const levels = new Map<string, LevelRule>();
    let scheme: Version3Models.SecurityScheme;
    try {
      scheme = await this.api.call(`reading the issue security scheme of project ${this.projectKey}`, (c) => c.projectPermissionSchemes.getProjectIssueSecurityScheme({ projectKeyOrId: this.projectKey }));
    } catch (err) {
      // No issue security scheme: Jira answers 404, and no issue has a level.
      if (err instanceof Error && err.cause instanceof HttpException && err.cause.status === 404) {
        this.levels = levels;
        return;
      }
      if (err instanceof ScopeError) {
        this.refused = err;
        return;
      }
      throw err;
    }
    const grants = new Map<string, ExpandedHolder[]>((scheme.levels ?? []).filter((l) => l.id).map((l) => [String(l.id), []]));
    if (scheme.id !== undefined && grants.size > 0) {
      const guard = this.api.pages(`who may see the security levels of project ${this.projectKey}`);
      for (let startAt = 0; ; guard.next(startAt)) {
        this.api.checkAborted();
        let page: Version3Models.PageIssueSecurityLevelMember;
        try {
          page = await this.api.call(`reading who may see the security levels of project ${this.projectKey}`, (c) => c.issueSecurityLevel.getIssueSecurityLevelMembers({ issueSecuritySchemeId: scheme.id!, startAt, maxResults: 50, expand: 'user' }));
        } catch (err) {
          if (err instanceof ScopeError) {
            this.refused = err;
            return;
          }
          throw err;
        }
        const values = page.values ?? [];
        for (const member of values) if (member.holder) grants.get(String(member.issueSecurityLevelId))?.push(member.holder as ExpandedHolder);
        startAt += values.length;
        if (page.isLast !== false || values.length === 0) break;
      }
      this.browseGrants = await this.readBrowse();
      this.browse = browsePasses(this.browseGrants.holders);
    }
    for (const level of scheme.levels ?? []) {
      if (!level.id) continue;
      let holders: Holders;
      try {
        holders = await resolveHolders(grants.get(String(level.id)) ?? [], this.directory, this.projectKey);
      } catch (err) {
        // A project role (or group) of the level the account may not read: who may see the level is not known.
        if (err instanceof ScopeError) {
          this.refused = err;
          return;
        }
        throw err;
      }
      const members = new Set([...holders.emails, ...[...holders.groups.values()].flat()]);
      // A level open to anyone shows its issues to everyone who may browse the project.
      const browsers = this.browseGrants ? browsePrincipals(this.browseGrants.holders) : new Set<string>();
      const people: LevelRule['people'] = holders.public ? (browsers === null ? 'public' : browsers) : new Set([...members].filter(this.browse));
      const digest = createHash('sha256')
        .update(JSON.stringify([people === 'public' ? PUBLIC : [...people].sort(), holders.public, holders.reporter, holders.assignee, holders.unresolved]))
        .digest('hex')
        .slice(0, 32);
      levels.set(String(level.id), { name: level.name ?? String(level.id), holders, people, members, digest });
    }
    this.levels = levels;
  }

  /** The digest of each level, to compare with the ones a cursor kept. */
  digests(): Map<string, string> {
    return new Map([...(this.levels ?? new Map<string, LevelRule>())].map(([id, rule]) => [id, rule.digest]));
  }

  digest(levelId: string): string | undefined {
    return this.levels?.get(levelId)?.digest;
  }

  /**
   * The per-document permission of an issue with a level: the level's members, plus the issue's reporter or assignee
   * when the level grants them, who may also browse the project. A member whose email Jira hides is left out and
   * counted in `unresolved`: the issue keeps its list of the others rather than yield to an API rule, so it is never
   * shown wider than Jira shows it. A level unknown to the scheme just read closes the issue.
   */
  permission(levelId: string, issue: SearchedIssue): PermissionCapture {
    const rule = this.levels?.get(levelId);
    if (!rule) return { status: 'captured', acl: [PRIVATE] };
    let unresolved = rule.holders.unresolved;
    const people = rule.people === 'public' ? 'public' : new Set(rule.people);
    // The people the issue names whom the browse grants reach in this issue (its reporter, say) browse it too.
    const issueBrowsers = this.browseGrants ? issuePeople(this.browseGrants.issueGrants, issue).principals : new Set<string>();
    if (people !== 'public') for (const principal of issueBrowsers) if (rule.holders.public || rule.members.has(principal)) people.add(principal);
    const add = (user: Version3Models.UserDetails | null | undefined) => {
      if (!user || user.active === false) return;
      const principal = userPrincipal(user.emailAddress);
      if (!principal) unresolved++;
      else if (people !== 'public' && (this.browse(principal) || issueBrowsers.has(principal))) people.add(principal);
    };
    if (rule.holders.reporter) add(issue.fields.reporter);
    if (rule.holders.assignee) add(issue.fields.assignee);
    const counted = unresolved > 0 ? { unresolved } : {};
    if (people === 'public') return { status: 'captured', acl: [PUBLIC] };
    if (people.size === 0) return { status: 'captured', acl: [PRIVATE], ...counted };
    // The people of a level and the project at once cannot be named by groups: past the limit, one principal.
    return { status: 'captured', acl: people.size <= MAX_PRINCIPALS ? [...people].sort() : [sitePrincipal(this.api.site.host, `security-level:${levelId}`)], ...counted };
  }

  /** How many members of a level the connector could not resolve (emails hidden, grants it cannot list). */
  unresolved(levelId: string): number {
    return this.levels?.get(levelId)?.holders.unresolved ?? 0;
  }
}
