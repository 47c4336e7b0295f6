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
}

/** Who holds a grant: a group (by id), one user (by account id), every licensed user, or anyone. */
export type JiraHolder = { type: 'group'; value: string } | { type: 'user'; value: string } | { type: 'applicationRole' } | { type: 'anyone' };

interface IssueState {
  id: string;
  key: string;
  projectKey: string;
  summary: string;
  created: string;
  updated: string;
  securityLevelId: string | null;
  comments: Version3Models.Comment[];
}

interface ProjectState {
  project: Version3Models.Project;
  permissionSchemeId: number;
  /** Holders of BROWSE_PROJECTS in the project's permission scheme. */
  browse: JiraHolder[];
  securitySchemeId: number;
  /** Levels of the project's issue security scheme, each with the holders who may see its issues. */
  securityLevels: { id: string; name: string; holders: JiraHolder[] }[];
}

/** Start-at pagination as Jira's paged lists do it: startAt, maxResults, total and isLast. */
function startAtPage<T>(items: T[], query: Record<string, string>, size: number) {
  const startAt = Number(query.startAt ?? '0') || 0;
  const values = items.slice(startAt, startAt + size);
  return { startAt, maxResults: size, total: items.length, isLast: startAt + size >= items.length, values };
}

/**
 * Reads the JQL a tracker connector sends: `project = KEY`, `updated >= "yyyy-MM-dd HH:mm"` (minute-granular, as Jira
 * compares), joined by AND, and `ORDER BY updated|created|key ASC|DESC`. Anything else is refused with a 400 as Jira
 * refuses JQL it cannot parse, so a connector sending more than the fake knows fails loudly.
 */
function parseJql(jql: string) {
  const [where, orderBy = 'created DESC'] = jql.split(/\s+ORDER\s+BY\s+/i);
  const filters: ((issue: IssueState) => boolean)[] = [];
  for (const clause of where.split(/\s+AND\s+/i).map((c) => c.trim()).filter((c) => c !== '')) {
    const project = /^project\s*=\s*"?(\w+)"?$/i.exec(clause);
    const updated = /^updated\s*(>=|>)\s*"(\d{4}-\d{2}-\d{2} \d{2}:\d{2})"$/i.exec(clause);
    if (project) filters.push((i) => i.projectKey === project[1]);
    else if (updated) {
      const bound = Date.parse(`${updated[2].replace(' ', 'T')}:00Z`);
      const minute = (iso: string) => Math.floor(Date.parse(iso) / 60_000) * 60_000;
      filters.push(updated[1] === '>=' ? (i) => minute(i.updated) >= bound : (i) => minute(i.updated) > bound);
    } else throw Object.assign(new Error(`Error in the JQL Query: cannot read '${clause}'.`), { statusCode: 400 });
  }
  const orders = orderBy.split(',').map((o) => {
    const [field, direction = 'ASC'] = o.trim().split(/\s+/);
    const sign = direction.toUpperCase() === 'DESC' ? -1 : 1;
    const key = (i: IssueState) => (field === 'key' ? Number(i.key.split('-')[1]) : Date.parse(field === 'updated' ? i.updated : i.created));
    return (a: IssueState, b: IssueState) => sign * (key(a) - key(b));
  });
  return {
    matches: (issue: IssueState) => filters.every((f) => f(issue)),
    compare: (a: IssueState, b: IssueState) => orders.reduce((result, order) => result || order(a, b), 0) || Number(a.key.split('-')[1]) - Number(b.key.split('-')[1]),
  };
}

/**
 * A fake of the Jira Cloud REST API v3 (the endpoints a tracker connector calls): projects, enhanced JQL search paged
 * by `nextPageToken`, comments and other lists paged by `startAt`/`maxResults`, the BROWSE_PROJECTS grants of each
 * project's permission scheme, issue security levels with their members, group members and users whose email may be
 * hidden. Authentication is HTTP Basic with an email and an API token, as for Jira Cloud.
 */
export class JiraFake {
  readonly switches: ScenarioSwitches;
  private readonly projects = new Map<string, ProjectState>();
  private readonly issues = new Map<string, IssueState>();
  private readonly groups = new Map<string, { name: string; members: string[] }>();
  private readonly users = new Map<string, JiraUser>();
  private clock = Date.parse('2024-04-02T08:00:00.000Z');
  private running: RunningFake | undefined;

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

  addProject(key: string, name: string, browse: JiraHolder[], securityLevels: ProjectState['securityLevels'] = []): void {
    const id = String(10000 + this.projects.size);
    this.projects.set(key, {
      project: { id, key, name, self: `/rest/api/3/project/${id}`, lead: this.asUser([...this.users.values()][0]), projectTypeKey: 'software', isPrivate: false, simplified: false, style: 'classic' },
      permissionSchemeId: 20000 + this.projects.size,
      browse: [...browse],
      securitySchemeId: 30000 + this.projects.size,
      securityLevels: securityLevels.map((l) => ({ ...l, holders: [...l.holders] })),
    });
  }

  /** Grants or withdraws BROWSE_PROJECTS: a permission-only change that moves no issue's `updated`. */
  setBrowse(projectKey: string, browse: JiraHolder[]): void {
    this.project(projectKey).browse = [...browse];
  }

  /** Creates an issue; `at` sets created and updated, in the past for a back-dated import. */
  addIssue(projectKey: string, summary: string, options: { at?: string; securityLevelId?: string } = {}): string {
    const number = [...this.issues.values()].filter((i) => i.projectKey === projectKey).length + 1;
    const key = `${projectKey}-${number}`;
    const at = options.at ?? this.tick();
    this.issues.set(key, { id: String(40000 + this.issues.size), key, projectKey, summary, created: at, updated: at, securityLevelId: options.securityLevelId ?? null, comments: [] });
    return key;
  }

  /** Edits a summary and sets `updated` (now, or the given time, which may be back-dated). */
  editIssue(key: string, summary: string, updated?: string): void {
    Object.assign(this.issue(key), { summary, updated: updated ?? this.tick() });
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
      const interruption = this.switches.intercept(this.credentialOf(req));
      if (interruption !== undefined) return this.interrupt(reply, interruption);
    });
    app.addHook('onSend', async (req) => {
      this.switches.answered(req.method, req.url);
    });
    app.setErrorHandler((error: { statusCode?: number; message: string }, _req, reply) =>
      reply.code(error.statusCode ?? 500).send({ errorMessages: [error.message], errors: {} }),
    );
    const q = (req: FastifyRequest) => req.query as Record<string, string>;
    const size = (req: FastifyRequest, byDefault: number, max: number) => this.switches.pageSize(Number(q(req).maxResults), byDefault, max);

    app.get('/rest/api/3/myself', (): Version3Models.User => ({ accountId: 'crs-connector', displayName: 'CRS connector', emailAddress: this.credentials.email, active: true, accountType: 'atlassian' }));
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
        .flatMap((l) => l.holders.map((h, n) => ({ id: Number(`${l.id}${n}`), issueSecurityLevelId: Number(l.id), holder: this.holder(h) })));
      return { self: req.url, ...startAtPage(members, q(req), size(req, 50, 50)) };
    });
    app.get('/rest/api/3/group/member', (req): Version3Models.PageUserDetails => {
      const group = this.groups.get(q(req).groupId);
      if (group === undefined) throw Object.assign(new Error('Specified group does not exist.'), { statusCode: 404 });
      return { self: req.url, ...startAtPage(group.members.map((id) => this.asUser(this.users.get(id)!)), q(req), size(req, 50, 50)) };
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

  private interrupt(reply: FastifyReply, interruption: Interruption) {
    switch (interruption.kind) {
      case 'rate-limited':
        return reply
          .code(429)
          .header('retry-after', String(interruption.retryAfterSeconds))
          .header('x-ratelimit-reset', new Date(Date.now() + interruption.retryAfterSeconds * 1000).toISOString())
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
    const { matches, compare } = parseJql(query.jql ?? '');
    const all = [...this.issues.values()].filter(matches).sort(compare);
    const offset = query.nextPageToken ? Number(Buffer.from(query.nextPageToken, 'base64url').toString('utf8')) : 0;
    const size = this.switches.pageSize(Number(query.maxResults), 50, 100);
    const wanted = new Set(String(query.fields ?? 'summary,updated,created').split(','));
    const issues = all.slice(offset, offset + size).map((i): JiraSearchedIssue => {
      const project = this.project(i.projectKey);
      const level = project.securityLevels.find((l) => l.id === i.securityLevelId);
      const fields: JiraSearchedIssue['fields'] = { summary: i.summary, created: i.created, updated: i.updated, security: level === undefined ? null : { id: level.id, name: level.name } };
      return { id: i.id, key: i.key, self: `/rest/api/3/issue/${i.id}`, fields: Object.fromEntries(Object.entries(fields).filter(([k]) => wanted.has(k) || wanted.has('*all'))) };
    });
    const more = offset + size < all.length;
    return { issues, isLast: !more, ...(more ? { nextPageToken: Buffer.from(String(offset + size)).toString('base64url') } : {}) };
  }

  private permissionScheme(project: ProjectState, expand: string | undefined): Version3Models.PermissionScheme {
    const scheme: Version3Models.PermissionScheme = { id: project.permissionSchemeId, name: `${project.project.key} permission scheme`, self: `/rest/api/3/permissionscheme/${project.permissionSchemeId}` };
    if (!(expand ?? '').split(',').some((e) => e === 'permissions' || e === 'all')) return scheme;
    return { ...scheme, permissions: project.browse.map((h, n) => ({ id: project.permissionSchemeId * 100 + n, permission: 'BROWSE_PROJECTS', holder: this.holder(h) })) };
  }

  private holder(holder: JiraHolder): Version3Models.PermissionHolder {
    switch (holder.type) {
      case 'group':
        return { type: 'group', parameter: this.groups.get(holder.value)?.name, value: holder.value };
      case 'user':
        return { type: 'user', parameter: holder.value, value: holder.value };
      default:
        return { type: holder.type };
    }
  }

  private asUser(user: JiraUser): Version3Models.User {
    return { accountId: user.accountId, displayName: user.displayName, active: true, accountType: 'atlassian', ...(user.emailAddress === undefined ? {} : { emailAddress: user.emailAddress }) };
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

  private issue(key: string): IssueState {
    const issue = this.issues.get(key);
    if (issue === undefined) throw Object.assign(new Error('Issue does not exist or you do not have permission to see it.'), { statusCode: 404 });
    return issue;
  }
}
