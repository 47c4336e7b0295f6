import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Version3Models } from 'jira.js';
import { createFakeApp, listenOnLoopback, type RunningFake } from '../loopback-server';
import { ScenarioSwitches, type Interruption } from '../scenario-switches';

/** An issue as search returns it: only the fields asked for, plus the security level the library's Fields omits. */
export type JiraSearchedIssue = Omit<Version3Models.Issue, 'fields'> & {
  fields: Partial<Version3Models.Fields> & { security?: Version3Models.SecurityLevel | null };
};
/** The enhanced search page; the service sends `isLast` beside `nextPageToken`, which the library's model omits. */
type JiraSearchPage = Omit<Version3Models.SearchAndReconcileResults, 'issues'> & { issues: JiraSearchedIssue[]; isLast: boolean };

export interface JiraUser {
  accountId: string;
  displayName: string;
  /** Undefined when the user's profile visibility hides it, as Atlassian's privacy settings allow. */
  emailAddress?: string;
  /** False for a deactivated account (default true): group members and role actors leave it out when asked to. */
  active?: boolean;
}

/**
 * Who holds a grant: a group (by id), one user (by account id), a project role (by role id: its actors in the project),
 * every licensed user, anyone, the project's lead, the issue's reporter or assignee, the users or groups a custom
 * field of the issue names (by field id), or a kind only some sites have (Jira Service Management's portal customers).
 */
export type JiraHolder =
  | { type: 'group'; value: string }
  | { type: 'user'; value: string }
  | { type: 'projectRole'; value: string }
  /** every user of an application (`jira-software`, `jira-servicedesk`), or of any application without a key */
  | { type: 'applicationRole'; value?: string }
  | { type: 'anyone' }
  | { type: 'reporter' }
  | { type: 'assignee' }
  | { type: 'projectLead' }
  | { type: 'userCustomField'; value: string }
  | { type: 'groupCustomField'; value: string }
  | { type: 'sd.customer.portal.only' };

/** Who acts in a project role in one project: a user (by account id) or a group (by group id). */
export type JiraRoleActor = { type: 'user'; value: string } | { type: 'group'; value: string };

/** A permission holder as Jira sends it with `expand=user`: the user's details beside the account id. */
export type JiraExpandedHolder = Version3Models.PermissionHolder & { user?: Version3Models.User };

/** What an issue is made of besides its summary, as an import or an edit sets it. */
export interface JiraIssueFields {
  description?: string;
  issueType?: string;
  status?: string;
  labels?: string[];
  /** account ids */
  assignee?: string | null;
  reporter?: string;
  priority?: string;
  /** user-picker custom fields by field id (`customfield_10010`): the account ids each names */
  customFields?: Record<string, string[]>;
}

interface IssueState {
  id: string;
  key: string;
  projectKey: string;
  summary: string;
  description: string;
  issueType: string;
  status: string;
  labels: string[];
  assignee: string | null;
  reporter: string | null;
  priority: string;
  created: string;
  updated: string;
  securityLevelId: string | null;
  comments: Version3Models.Comment[];
  customFields: Record<string, string[]>;
}

/** Plain text as the Atlassian Document Format Jira v3 sends: one paragraph per line. */
function adf(text: string): Version3Models.Document {
  return { type: 'doc', version: 1, content: text.split('\n').map((line) => ({ type: 'paragraph', content: line === '' ? [] : [{ type: 'text', text: line }] })) };
}

/** The UTC instant of a wall-clock time in a time zone (how Jira reads a JQL date: in the searching user's zone). */
function zonedToUtc(local: string, timeZone: string): number {
  const asUtc = Date.parse(`${local.replace(' ', 'T')}:00Z`);
  const offsetAt = (instant: number) => {
    const parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(new Date(instant));
    const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
    return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - instant;
  };
  const first = asUtc - offsetAt(asUtc);
  return asUtc - offsetAt(first);
}

interface ProjectState {
  project: Version3Models.Project;
  permissionSchemeId: number;
  /** Holders of BROWSE_PROJECTS in the project's permission scheme. */
  browse: JiraHolder[];
  securitySchemeId: number;
  /** Levels of the project's issue security scheme, each with the holders who may see its issues. */
  securityLevels: { id: string; name: string; holders: JiraHolder[] }[];
  /** The actors of each project role in this project, by role id; a role without an entry has none here. */
  roleActors: Map<string, JiraRoleActor[]>;
}

/** Start-at pagination as Jira's paged lists do it: startAt, maxResults, total and isLast. */
function startAtPage<T>(items: T[], query: Record<string, string>, size: number) {
  const startAt = Number(query.startAt ?? '0') || 0;
  const values = items.slice(startAt, startAt + size);
  return { startAt, maxResults: size, total: items.length, isLast: startAt + size >= items.length, values };
}

/**
 * Reads the JQL a tracker connector sends: `project = KEY`, `updated >= "yyyy-MM-dd HH:mm"` (minute-granular, read in
 * the searching user's time zone, as Jira compares), `level = ID` / `level in (ID, ...)`, `key > "KEY-N"`, joined by
 * AND, and `ORDER BY updated|created|key ASC|DESC`. Anything else is refused with a 400 as Jira refuses JQL it cannot
 * parse, so a connector sending more than the fake knows fails loudly; so is a project that does not exist.
 */
function parseJql(jql: string, timeZone: string, projectExists: (key: string) => boolean) {
  const [where, orderBy = 'created DESC'] = jql.split(/\s+ORDER\s+BY\s+/i);
  const filters: ((issue: IssueState) => boolean)[] = [];
  const number = (key: string) => Number(key.split('-')[1]);
  for (const clause of where.split(/\s+AND\s+/i).map((c) => c.trim()).filter((c) => c !== '')) {
    const project = /^project\s*=\s*"?(\w+)"?$/i.exec(clause);
    const updated = /^updated\s*(>=|>)\s*"(\d{4}-\d{2}-\d{2} \d{2}:\d{2})"$/i.exec(clause);
    const level = /^level\s*(?:=\s*(\d+)|in\s*\(([\d,\s]+)\))$/i.exec(clause);
    const after = /^(?:key|issuekey)\s*>\s*"?(\w+-\d+)"?$/i.exec(clause);
    if (project) {
      if (!projectExists(project[1])) throw Object.assign(new Error(`The value '${project[1]}' does not exist for the field 'project'.`), { statusCode: 400 });
      filters.push((i) => i.projectKey === project[1]);
    } else if (updated) {
      const bound = zonedToUtc(updated[2], timeZone);
      const minute = (iso: string) => Math.floor(Date.parse(iso) / 60_000) * 60_000;
      filters.push(updated[1] === '>=' ? (i) => minute(i.updated) >= bound : (i) => minute(i.updated) > bound);
    } else if (level) {
      const ids = (level[1] ?? level[2]).split(',').map((id) => id.trim());
      filters.push((i) => i.securityLevelId !== null && ids.includes(i.securityLevelId));
    } else if (after) {
      filters.push((i) => i.projectKey === after[1].split('-')[0] && number(i.key) > number(after[1]));
    } else throw Object.assign(new Error(`Error in the JQL Query: cannot read '${clause}'.`), { statusCode: 400 });
  }
  const orders = orderBy.split(',').map((o) => {
    const [field, direction = 'ASC'] = o.trim().split(/\s+/);
    const sign = direction.toUpperCase() === 'DESC' ? -1 : 1;
    const key = (i: IssueState) => (field === 'key' ? number(i.key) : Date.parse(field === 'updated' ? i.updated : i.created));
    return (a: IssueState, b: IssueState) => sign * (key(a) - key(b));
  });
  return {
    matches: (issue: IssueState) => filters.every((f) => f(issue)),
    compare: (a: IssueState, b: IssueState) => orders.reduce((result, order) => result || order(a, b), 0) || number(a.key) - number(b.key),
  };
}

/**
 * A fake of the Jira Cloud REST API v3 (the endpoints a tracker connector calls): projects, enhanced JQL search paged
 * by `nextPageToken`, comments and other lists paged by `startAt`/`maxResults`, the BROWSE_PROJECTS grants of each
 * project's permission scheme, issue security levels with their members, project roles (defined for the site, with
 * actors per project), group members and users whose email may be hidden. Authentication is HTTP Basic with an email
 * and an API token, as for Jira Cloud.
 */
export class JiraFake {
  readonly switches: ScenarioSwitches;
  private readonly projects = new Map<string, ProjectState>();
  private readonly issues = new Map<string, IssueState>();
  private readonly groups = new Map<string, { name: string; members: string[] }>();
  private readonly users = new Map<string, JiraUser>();
  /** The project roles of the site, by id; as in Jira Cloud every project has each role, with actors of its own. */
  private readonly roles = new Map<string, { name: string; description: string }>();
  private nextId = 0;
  private clock = Date.parse('2024-04-02T08:00:00.000Z');
  private running: RunningFake | undefined;
  /** The connector account's time zone (its profile's), in which Jira reads the dates of its JQL. */
  timeZone = 'UTC';
  /** How many comments the `comment` field of a searched issue carries; the rest are read from /issue/{key}/comment. */
  commentsInSearch = 20;
  /**
   * When true, search answers every request with the first page of its query and the same `nextPageToken`, whatever
   * the token or the `key >` bound: a server that does not move on.
   */
  searchStuck = false;
  /** Credentials refused for now (an administrator revoked the token), until `acceptCredentials`. */
  private suspended = false;
  private readonly throttles: { matches: (url: string) => boolean; skip: number; until: Date }[] = [];

  constructor(readonly credentials = { email: 'crs-connector@example.test', apiToken: 'ATATT-fake-api-token' }) {
    this.switches = new ScenarioSwitches(new Set([`${credentials.email}:${credentials.apiToken}`]));
  }

  get credential(): string {
    return `${this.credentials.email}:${this.credentials.apiToken}`;
  }

  addUser(user: JiraUser): void {
    this.users.set(user.accountId, user);
  }

  addGroup(groupId: string, name: string, members: string[]): void {
    this.groups.set(groupId, { name, members: [...members] });
  }

  addGroupMember(groupId: string, accountId: string): void {
    this.groups.get(groupId)!.members.push(accountId);
  }

  /** Deactivates (or reactivates) an account. */
  setUserActive(accountId: string, active: boolean): void {
    this.users.get(accountId)!.active = active;
  }

  /** Defines a project role for the site (Jira's role ids are numbers); it has no actors in any project until set. */
  addProjectRole(id: string, name: string): void {
    this.roles.set(id, { name, description: `A project role that represents ${name.toLowerCase()} in a project` });
  }

  /** Sets who acts in a role in one project: a permission-only change that moves no issue's `updated`, as in Jira. */
  setRoleActors(projectKey: string, roleId: string, actors: JiraRoleActor[]): void {
    if (!this.roles.has(roleId)) throw new Error(`no project role ${roleId}`);
    this.project(projectKey).roleActors.set(roleId, [...actors]);
  }

  /** Refuses the connector's credentials with a 401 until `acceptCredentials`. */
  refuseCredentials(): void {
    this.suspended = true;
  }

  acceptCredentials(): void {
    this.suspended = false;
  }

  /**
   * The next request whose path matches, after `skip` such requests were answered, is throttled with a 429 whose
   * X-RateLimit-Reset is `until` (and Retry-After the seconds until it).
   */
  throttleMatching(matches: (url: string) => boolean, skip: number, until: Date): void {
    this.throttles.push({ matches, skip, until });
  }

  addProject(key: string, name: string, browse: JiraHolder[], securityLevels: ProjectState['securityLevels'] = []): void {
    const id = String(10000 + this.projects.size);
    this.projects.set(key, {
      project: { id, key, name, self: `/rest/api/3/project/${id}`, lead: this.asUser([...this.users.values()][0]), projectTypeKey: 'software', isPrivate: false, simplified: false, style: 'classic' },
      permissionSchemeId: 20000 + this.projects.size,
      browse: [...browse],
      securitySchemeId: 30000 + this.projects.size,
      securityLevels: securityLevels.map((l) => ({ ...l, holders: [...l.holders] })),
      roleActors: new Map(),
    });
  }

  /** Grants or withdraws BROWSE_PROJECTS: a permission-only change that moves no issue's `updated`. */
  setBrowse(projectKey: string, browse: JiraHolder[]): void {
    this.project(projectKey).browse = [...browse];
  }

  /** Adds a level to a project's issue security scheme. */
  addSecurityLevel(projectKey: string, level: { id: string; name: string; holders: JiraHolder[] }): void {
    this.project(projectKey).securityLevels.push({ ...level, holders: [...level.holders] });
  }

  /** Changes who may see a level's issues: a permission-only change that moves no issue's `updated`, as in Jira. */
  setSecurityLevelHolders(projectKey: string, levelId: string, holders: JiraHolder[]): void {
    this.project(projectKey).securityLevels.find((l) => l.id === levelId)!.holders = [...holders];
  }

  /**
   * Creates an issue; `at` sets created and updated, in the past for a back-dated import. `id` chooses the issue id
   * (Jira's are numeric strings; a connector treats them as opaque), else the next one.
   */
  addIssue(projectKey: string, summary: string, options: { at?: string; securityLevelId?: string; id?: string } & JiraIssueFields = {}): string {
    const number = [...this.issues.values()].filter((i) => i.projectKey === projectKey).reduce((max, i) => Math.max(max, Number(i.key.split('-')[1])), 0) + 1;
    const key = `${projectKey}-${number}`;
    const at = options.at ?? this.tick();
    this.issues.set(key, {
      id: options.id ?? String(40000 + this.nextId++),
      key,
      projectKey,
      summary,
      description: options.description ?? '',
      issueType: options.issueType ?? 'Task',
      status: options.status ?? 'To Do',
      labels: [...(options.labels ?? [])],
      assignee: options.assignee ?? null,
      reporter: options.reporter ?? null,
      priority: options.priority ?? 'Medium',
      created: at,
      updated: at,
      securityLevelId: options.securityLevelId ?? null,
      comments: [],
      customFields: { ...(options.customFields ?? {}) },
    });
    return key;
  }

  /** The id of the issue with this key. */
  issueId(key: string): string {
    return this.issue(key).id;
  }

  /** The key of the issue with this id. */
  keyOf(id: string): string | undefined {
    return [...this.issues.values()].find((i) => i.id === id)?.key;
  }

  /** Edits a summary and sets `updated` (now, or the given time, which may be back-dated). */
  editIssue(key: string, summary: string, updated?: string): void {
    Object.assign(this.issue(key), { summary, updated: updated ?? this.tick() });
  }

  /** Edits other fields of an issue and sets `updated` (now, or the given time, which may be back-dated). */
  updateIssue(key: string, fields: JiraIssueFields & { summary?: string }, updated?: string): void {
    const issue = this.issue(key);
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) Object.assign(issue, { [name]: Array.isArray(value) ? [...value] : value });
    issue.updated = updated ?? this.tick();
  }

  /** Setting a security level is an edit of the issue: it moves `updated`, as in Jira. */
  setSecurityLevel(key: string, levelId: string | null): void {
    Object.assign(this.issue(key), { securityLevelId: levelId, updated: this.tick() });
  }

  addComment(key: string, author: string, text: string): void {
    const issue = this.issue(key);
    const at = this.tick();
    issue.comments.push({ id: String(50000 + issue.comments.length), author: this.asUser(this.users.get(author)!), body: { type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] }, created: at, updated: at, jsdPublic: true });
    issue.updated = at;
  }

  /** A deleted issue leaves no trace in search: only pruning against a listing of keys finds it. */
  deleteIssue(key: string): void {
    this.issues.delete(key);
  }

  async start(): Promise<RunningFake> {
    const app = createFakeApp();
    app.addHook('onRequest', async (req, reply) => {
      if (this.suspended && this.credentialOf(req) === this.credential) return this.interrupt(reply, { kind: 'unauthorized', reason: 'revoked' });
      const interruption = this.switches.intercept(this.credentialOf(req));
      if (interruption !== undefined) return this.interrupt(reply, interruption);
      const throttle = this.throttles.find((t) => t.matches(req.url));
      if (throttle !== undefined) {
        if (throttle.skip > 0) throttle.skip--;
        else {
          this.throttles.splice(this.throttles.indexOf(throttle), 1);
          return this.interrupt(reply, { kind: 'rate-limited', retryAfterSeconds: Math.max(1, Math.ceil((throttle.until.getTime() - Date.now()) / 1000)) }, throttle.until);
        }
      }
    });
    app.addHook('onSend', async (req) => {
      this.switches.answered(req.method, req.url);
    });
    app.setErrorHandler((error: { statusCode?: number; message: string }, _req, reply) =>
      reply.code(error.statusCode ?? 500).send({ errorMessages: [error.message], errors: {} }),
    );
    const q = (req: FastifyRequest) => req.query as Record<string, string>;
    const size = (req: FastifyRequest, byDefault: number, max: number) => this.switches.pageSize(Number(q(req).maxResults), byDefault, max);

    app.get('/rest/api/3/myself', (): Version3Models.User => ({ accountId: 'crs-connector', displayName: 'CRS connector', emailAddress: this.credentials.email, active: true, accountType: 'atlassian', timeZone: this.timeZone }));
    app.get('/rest/api/3/project/search', (req): Version3Models.PageProject => {
      const projects = [...this.projects.values()].map((p) => p.project).sort((a, b) => a.key.localeCompare(b.key));
      return { self: req.url, ...startAtPage(projects, q(req), size(req, 50, 100)) };
    });
    app.get('/rest/api/3/search/jql', (req) => this.search(req));
    app.get('/rest/api/3/issue/:key/comment', (req): Version3Models.PageOfComments => {
      const { values, ...page } = startAtPage(this.issue((req.params as { key: string }).key).comments, q(req), size(req, 100, 5000));
      return { startAt: page.startAt, maxResults: page.maxResults, total: page.total, comments: values };
    });
    app.get('/rest/api/3/project/:key/permissionscheme', (req): Version3Models.PermissionScheme => this.permissionScheme(this.project((req.params as { key: string }).key), q(req).expand));
    app.get('/rest/api/3/project/:key', (req): Version3Models.Project => this.project((req.params as { key: string }).key).project);
    app.get('/rest/api/3/project/:key/issuesecuritylevelscheme', (req): Version3Models.SecurityScheme => {
      const project = this.project((req.params as { key: string }).key);
      return { id: project.securitySchemeId, name: `${project.project.key} security`, levels: project.securityLevels.map((l) => ({ id: l.id, name: l.name })) };
    });
    app.get('/rest/api/3/issuesecurityschemes/:schemeId/members', (req): Version3Models.PageIssueSecurityLevelMember => {
      const project = [...this.projects.values()].find((p) => p.securitySchemeId === Number((req.params as { schemeId: string }).schemeId));
      if (project === undefined) throw Object.assign(new Error('Issue security scheme not found.'), { statusCode: 404 });
      const wanted = ([] as string[]).concat(q(req).issueSecurityLevelId ?? []).flatMap((id) => id.split(','));
      const members = project.securityLevels
        .filter((l) => wanted.length === 0 || wanted.includes(l.id))
        .flatMap((l) => l.holders.map((h, n) => ({ id: Number(`${l.id}${n}`), issueSecurityLevelId: Number(l.id), holder: this.holder(h, q(req).expand) })));
      return { self: req.url, ...startAtPage(members, q(req), size(req, 50, 50)) };
    });
    app.get('/rest/api/3/group/member', (req): Version3Models.PageUserDetails => {
      const group = this.groups.get(q(req).groupId);
      if (group === undefined) throw Object.assign(new Error('Specified group does not exist.'), { statusCode: 404 });
      const members = group.members.map((id) => this.users.get(id)!).filter((u) => q(req).includeInactiveUsers === 'true' || u.active !== false);
      return { self: req.url, ...startAtPage(members.map((u) => this.asUser(u)), q(req), size(req, 50, 50)) };
    });
    app.get('/rest/api/3/project/:key/role/:id', (req): Version3Models.ProjectRole => {
      const params = req.params as { key: string; id: string };
      return this.projectRole(this.project(params.key), params.id, q(req).excludeInactiveUsers === 'true');
    });
    app.get('/rest/api/3/user', (req): Version3Models.User => {
      const user = this.users.get(q(req).accountId);
      if (user === undefined) throw Object.assign(new Error('The user does not exist.'), { statusCode: 404 });
      return this.asUser(user);
    });
    this.running = await listenOnLoopback(app);
    return this.running;
  }

  async stop(): Promise<void> {
    await this.running?.close();
    this.running = undefined;
  }

  private credentialOf(req: FastifyRequest): string | undefined {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    return basic ? Buffer.from(basic[1], 'base64').toString('utf8') : undefined;
  }

  private interrupt(reply: FastifyReply, interruption: Interruption, resetAt?: Date) {
    switch (interruption.kind) {
      case 'rate-limited':
        return reply
          .code(429)
          .header('retry-after', String(interruption.retryAfterSeconds))
          .header('x-ratelimit-reset', (resetAt ?? new Date(Date.now() + interruption.retryAfterSeconds * 1000)).toISOString())
          .header('ratelimit-reason', 'jira-burst-based')
          .send({ errorMessages: ['Rate limit exceeded.'], errors: {} });
      case 'server-error':
        return reply.code(interruption.status).send({ errorMessages: ['Internal server error'], errors: {} });
      case 'unauthorized':
        return reply.code(401).header('www-authenticate', 'OAuth realm="https%3A%2F%2Ffake.atlassian.net"').send({ errorMessages: ['Client must be authenticated to access this resource.'], errors: {} });
      default: {
        const unreachable: never = interruption;
        throw new Error(`unknown interruption ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * Enhanced search (`/search/jql`): matching issues in the JQL order, `fields` limiting what each carries, paged by an
   * opaque `nextPageToken` that is absent on the last page.
   */
  private search(req: FastifyRequest): JiraSearchPage {
    const query = req.query as Record<string, string>;
    const { matches, compare } = parseJql(query.jql ?? '', this.timeZone, (key) => this.projects.has(key));
    const all = [...this.issues.values()].filter(matches).sort(compare);
    if (this.searchStuck) {
      const stuck = [...this.issues.values()].filter((i) => i.projectKey === /project\s*=\s*"?(\w+)/i.exec(query.jql ?? '')?.[1]).sort(compare);
      const size = this.switches.pageSize(Number(query.maxResults), 50, 100);
      return { issues: stuck.slice(0, size).map((i) => this.searched(i, query)), isLast: false, nextPageToken: 'c3R1Y2s' };
    }
    const offset = query.nextPageToken ? Number(Buffer.from(query.nextPageToken, 'base64url').toString('utf8')) : 0;
    const size = this.switches.pageSize(Number(query.maxResults), 50, 100);
    const issues = all.slice(offset, offset + size).map((i) => this.searched(i, query));
    const more = offset + size < all.length;
    return { issues, isLast: !more, ...(more ? { nextPageToken: Buffer.from(String(offset + size)).toString('base64url') } : {}) };
  }

  /** An issue as search returns it, with the `fields` the query asks for. */
  private searched(i: IssueState, query: Record<string, string>): JiraSearchedIssue {
    const wanted = new Set(String(query.fields ?? 'summary,updated,created').split(','));
    const project = this.project(i.projectKey);
    const level = project.securityLevels.find((l) => l.id === i.securityLevelId);
    const user = (accountId: string | null) => (accountId === null ? null : this.asUser(this.users.get(accountId)!));
    const shown = i.comments.slice(0, this.commentsInSearch);
    const fields: JiraSearchedIssue['fields'] = {
      summary: i.summary,
      description: adf(i.description),
      issuetype: { id: i.issueType, name: i.issueType, subtask: false },
      status: { id: i.status, name: i.status },
      labels: [...i.labels],
      assignee: user(i.assignee) ?? undefined,
      reporter: user(i.reporter) ?? undefined,
      priority: { id: i.priority, name: i.priority },
      comment: { comments: shown, self: `/rest/api/3/issue/${i.id}/comment`, maxResults: this.commentsInSearch, total: i.comments.length, startAt: 0 },
      created: i.created,
      updated: i.updated,
      security: level === undefined ? null : { id: level.id, name: level.name },
    };
    // a user-picker field: the users it names, as a multi-user picker sends them
    for (const [field, accountIds] of Object.entries(i.customFields)) Object.assign(fields, { [field]: accountIds.map((id) => this.asUser(this.users.get(id)!)) });
    if (i.assignee === null) Object.assign(fields, { assignee: null });
    if (i.reporter === null) Object.assign(fields, { reporter: null });
    return { id: i.id, key: i.key, self: `/rest/api/3/issue/${i.id}`, fields: Object.fromEntries(Object.entries(fields).filter(([k]) => wanted.has(k) || wanted.has('*all'))) };
  }

  /**
   * A project role with its actors in the project, as `GET /project/{key}/role/{id}` answers: users as
   * `atlassian-user-role-actor` with `actorUser.accountId` only (no email), groups as `atlassian-group-role-actor` with
   * `actorGroup` (name and id), sorted by display name; `excludeInactiveUsers` leaves deactivated users out. The
   * projects are company-managed (classic), whose roles carry no `scope`.
   */
  private projectRole(project: ProjectState, roleId: string, excludeInactiveUsers: boolean): Version3Models.ProjectRole {
    const role = this.roles.get(roleId);
    if (role === undefined) throw Object.assign(new Error(`No project role with id '${roleId}' exists.`), { statusCode: 404 });
    const actors = (project.roleActors.get(roleId) ?? []).flatMap((actor, n): Version3Models.RoleActor[] => {
      const id = Number(`${roleId}${n}`);
      if (actor.type === 'group') {
        const name = this.groups.get(actor.value)?.name ?? actor.value;
        return [{ id, displayName: name, type: 'atlassian-group-role-actor', name, actorGroup: { displayName: name, name, groupId: actor.value } }];
      }
      const user = this.users.get(actor.value)!;
      if (excludeInactiveUsers && user.active === false) return [];
      return [{ id, displayName: user.displayName, type: 'atlassian-user-role-actor', actorUser: { accountId: user.accountId } }];
    });
    actors.sort((a, b) => (a.displayName ?? '').localeCompare(b.displayName ?? ''));
    return {
      self: `/rest/api/3/project/${project.project.key}/role/${roleId}`,
      name: role.name,
      id: Number(roleId),
      description: role.description,
      actors,
    };
  }

  private permissionScheme(project: ProjectState, expand: string | undefined): Version3Models.PermissionScheme {
    const scheme: Version3Models.PermissionScheme = { id: project.permissionSchemeId, name: `${project.project.key} permission scheme`, self: `/rest/api/3/permissionscheme/${project.permissionSchemeId}` };
    if (!(expand ?? '').split(',').some((e) => e === 'permissions' || e === 'all')) return scheme;
    return { ...scheme, permissions: project.browse.map((h, n) => ({ id: project.permissionSchemeId * 100 + n, permission: 'BROWSE_PROJECTS', holder: this.holder(h, expand) })) };
  }

  /** A grant's holder; with `expand=user` (or `all`) a user holder carries the user's details, email when visible. */
  private holder(holder: JiraHolder, expand: string | undefined): JiraExpandedHolder {
    switch (holder.type) {
      case 'group':
        return { type: 'group', parameter: this.groups.get(holder.value)?.name, value: holder.value };
      case 'user': {
        const user = this.users.get(holder.value);
        const expanded = (expand ?? '').split(',').some((e) => e === 'user' || e === 'all');
        return { type: 'user', parameter: holder.value, value: holder.value, ...(expanded && user ? { user: this.asUser(user) } : {}) };
      }
      case 'projectRole':
        return { type: 'projectRole', parameter: holder.value, value: holder.value };
      case 'userCustomField':
      case 'groupCustomField':
        return { type: holder.type, parameter: holder.value, value: holder.value };
      case 'applicationRole':
        return holder.value === undefined ? { type: 'applicationRole' } : { type: 'applicationRole', parameter: holder.value, value: holder.value };
      default:
        return { type: holder.type };
    }
  }

  private asUser(user: JiraUser): Version3Models.User {
    return { accountId: user.accountId, displayName: user.displayName, active: user.active !== false, accountType: 'atlassian', ...(user.emailAddress === undefined ? {} : { emailAddress: user.emailAddress }) };
  }

  /** A clock that moves 90 seconds per event, so times are distinct and some share a minute with the next. */
  private tick(): string {
    this.clock += 90_000;
    return new Date(this.clock).toISOString().replace('Z', '+0000');
  }

  private project(key: string): ProjectState {
    const project = this.projects.get(key);
    if (project === undefined) throw Object.assign(new Error(`No project could be found with key '${key}'.`), { statusCode: 404 });
    return project;
  }

  /** An issue by key or id, as Jira's `issueIdOrKey` paths take either. */
  private issue(key: string): IssueState {
    const issue = this.issues.get(key) ?? [...this.issues.values()].find((i) => i.id === key);
    if (issue === undefined) throw Object.assign(new Error('Issue does not exist or you do not have permission to see it.'), { statusCode: 404 });
    return issue;
  }
}
