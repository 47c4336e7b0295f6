import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Models } from 'confluence.js';
import { createFakeApp, listenOnLoopback, type RunningFake } from '../loopback-server';
import { ScenarioSwitches, type Interruption } from '../scenario-switches';

export interface ConfluenceUser {
  accountId: string;
  displayName: string;
  /** Empty when the user's profile visibility hides it, as Atlassian's privacy settings allow. */
  email: string;
  /** `active` unless the account was deactivated (`inactive`) or closed (`closed`). */
  accountStatus?: 'active' | 'inactive' | 'closed';
}

/**
 * A user as the API describes one: with `accountStatus` where users are listed on their own (space permissions,
 * restrictions, the current user), with `isActive` in a group's member listing.
 */
type UserAnswer = Models.User & { accountStatus?: string; isActive?: boolean };

interface PageState {
  id: string;
  spaceKey: string;
  title: string;
  body: string;
  parentId: string | null;
  version: number;
  lastModified: string;
  /** Read restrictions on this page itself; those of its ancestors are read from them, as the API reports them. */
  readUsers: string[];
  readGroups: string[];
}

interface SpaceState {
  id: number;
  key: string;
  name: string;
  /** Who holds the space's read permission. */
  readUsers: string[];
  readGroups: string[];
  anonymousRead: boolean;
  /** Answers `expand=permissions` with an empty list, as Confluence does to an account that may not see them. */
  permissionsHidden?: boolean;
}

const links = (self: string, next?: string): Models.GenericLinks => ({ self, base: 'http://127.0.0.1/wiki', context: '/wiki', ...(next ? { next } : {}) });

/**
 * A fake of the Confluence Cloud REST API v1 under `/wiki/rest/api` (what confluence.js 2 calls): spaces with their read
 * permissions, CQL content search paged by `cursor` through `_links.next`, pages with ancestors, version and storage
 * body, per-page read restrictions, and group members. A restriction change moves neither a page's version nor its
 * last-modified time, as in Confluence, so only a sweep of restrictions finds it.
 */
export class ConfluenceFake {
  readonly switches: ScenarioSwitches;
  private readonly spaces = new Map<string, SpaceState>();
  private readonly pages = new Map<string, PageState>();
  private readonly groups = new Map<string, { name: string; members: string[] }>();
  private readonly users = new Map<string, ConfluenceUser>();
  private clock = Date.parse('2024-05-06T10:00:00.000Z');
  /**
   * While true, paged listings do not move on: a search's `_links.next` carries the cursor it was asked with, and
   * spaces and group members are listed from the first whatever `start` says.
   */
  stallPaging = false;
  /** The connector account's time zone (`GET /user/current` `timeZone`), in which CQL dates are read. */
  timeZone = 'UTC';
  private running: RunningFake | undefined;
  /** The connector's credential refused as revoked while true (`suspendCredential`), accepted again once false. */
  private suspended = false;
  /** A scripted throttle: the first request after a response that `after` matches is answered 429 until `until`. */
  private throttle: { after: (url: string, body: Models.ContentArray) => boolean; until: Date; armed: boolean } | undefined;

  constructor(readonly credentials = { email: 'crs-connector@example.test', apiToken: 'ATATT-fake-wiki-token' }) {
    this.switches = new ScenarioSwitches(new Set([`${credentials.email}:${credentials.apiToken}`]));
  }

  get credential(): string {
    return `${this.credentials.email}:${this.credentials.apiToken}`;
  }

  addUser(user: ConfluenceUser): void {
    this.users.set(user.accountId, user);
  }

  /** Deactivates an account, as a site admin does: it keeps its place in groups, permissions and restrictions. */
  deactivateUser(accountId: string): void {
    this.users.get(accountId)!.accountStatus = 'inactive';
  }

  addGroup(id: string, name: string, members: string[]): void {
    this.groups.set(id, { name, members: [...members] });
  }

  addSpace(key: string, name: string, read: { users?: string[]; groups?: string[]; anonymous?: boolean }): void {
    this.spaces.set(key, { id: 1000 + this.spaces.size, key, name, readUsers: read.users ?? [], readGroups: read.groups ?? [], anonymousRead: read.anonymous ?? false });
  }

  /** Replaces who holds the space's read permission, as a space admin does; no page moves. */
  setSpaceRead(key: string, read: { users?: string[]; groups?: string[]; anonymous?: boolean }): void {
    Object.assign(this.space(key), { readUsers: read.users ?? [], readGroups: read.groups ?? [], anonymousRead: read.anonymous ?? false });
  }

  /** Lists no permission of the space from now on, as Confluence answers an account that may not see them. */
  hideSpacePermissions(key: string): void {
    this.space(key).permissionsHidden = true;
  }

  /**
   * Creates a page under a parent (or at the space root); `at` sets its last-modified time, back-dated if wanted.
   * Ids are numbers as in Confluence, unless a test names the page (the conformance suite names its documents).
   */
  addPage(spaceKey: string, title: string, body: string, parentId: string | null = null, at?: string, id = String(200000 + this.pages.size)): string {
    this.pages.set(id, { id, spaceKey, title, body, parentId, version: 1, lastModified: at ?? this.tick(), readUsers: [], readGroups: [] });
    return id;
  }

  /** A new version of the page with a new last-modified time (or the given one). */
  editPage(id: string, body: string, at?: string): void {
    const page = this.page(id);
    Object.assign(page, { body, version: page.version + 1, lastModified: at ?? this.tick() });
  }

  deletePage(id: string): void {
    this.pages.delete(id);
  }

  /** Refuses the connector's credential as revoked (401) until `restoreCredential`. */
  suspendCredential(): void {
    this.suspended = true;
  }

  restoreCredential(): void {
    this.suspended = false;
  }

  /**
   * Throttles the first request that follows a content search whose URL and results `after` matches: a 429 whose
   * Retry-After is the HTTP date `until` (the header's other form besides seconds), once.
   */
  throttleAfter(after: (url: string, body: Models.ContentArray) => boolean, until: Date): void {
    this.throttle = { after, until, armed: false };
  }

  /** Restricts reading to these users and groups; empty lists lift the restriction. Version and time do not move. */
  restrictRead(id: string, users: string[], groups: string[]): void {
    Object.assign(this.page(id), { readUsers: [...users], readGroups: [...groups] });
  }

  async start(): Promise<RunningFake> {
    const app = createFakeApp();
    app.addHook('onRequest', async (req, reply) => {
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      const credential = basic ? Buffer.from(basic[1], 'base64').toString('utf8') : undefined;
      if (this.suspended && credential === this.credential) return this.interrupt(reply, { kind: 'unauthorized', reason: 'revoked' });
      if (this.throttle?.armed) {
        const { until } = this.throttle;
        this.throttle = undefined;
        return reply.code(429).header('retry-after', until.toUTCString()).send({ statusCode: 429, message: 'Rate limit exceeded' });
      }
      const interruption = this.switches.intercept(credential);
      if (interruption !== undefined) return this.interrupt(reply, interruption);
    });
    app.addHook('onSend', async (req) => {
      this.switches.answered(req.method, req.url);
    });
    app.setErrorHandler((error: { statusCode?: number; message: string }, _req, reply) =>
      reply.code(error.statusCode ?? 500).send({ statusCode: error.statusCode ?? 500, message: error.message, data: { authorized: true, valid: false, errors: [] } }),
    );
    const q = (req: FastifyRequest) => req.query as Record<string, string>;

    app.get('/wiki/rest/api/user/current', (): Models.User & { timeZone: string } => ({ ...this.asUser({ accountId: 'crs-connector', displayName: 'CRS connector', email: this.credentials.email }), timeZone: this.timeZone }));
    app.get('/wiki/rest/api/space', (req): Models.SpaceArray => {
      const start = this.stallPaging ? 0 : Number(q(req).start ?? '0');
      const limit = this.switches.pageSize(Number(q(req).limit), 25, 250);
      const all = [...this.spaces.values()].sort((a, b) => a.key.localeCompare(b.key));
      const results = all.slice(start, start + limit).map((s) => this.describeSpace(s, q(req).expand));
      const next = start + limit < all.length ? `/rest/api/space?limit=${limit}&start=${start + limit}` : undefined;
      return { results, start, limit, size: results.length, _links: links(req.url, next) };
    });
    app.get('/wiki/rest/api/space/:key', (req) => this.describeSpace(this.space((req.params as { key: string }).key), q(req).expand));
    app.get('/wiki/rest/api/content/search', (req) => {
      const found = this.search(req);
      if (this.throttle && !this.throttle.armed && this.throttle.after(req.url, found)) this.throttle.armed = true;
      return found;
    });
    app.get('/wiki/rest/api/content/:id', (req) => this.describePage(this.page((req.params as { id: string }).id), q(req).expand));
    app.get('/wiki/rest/api/content/:id/restriction/byOperation/:operation', (req): Models.ContentRestriction => {
      const { id, operation } = req.params as { id: string; operation: string };
      const start = this.stallPaging ? 0 : Number(q(req).start ?? '0');
      return this.readRestriction(this.page(id), operation, start, this.switches.pageSize(Number(q(req).limit), 100, 200));
    });
    app.get('/wiki/rest/api/group/:groupId/membersByGroupId', (req): Models.UserArray => {
      const group = this.groups.get((req.params as { groupId: string }).groupId);
      if (group === undefined) throw Object.assign(new Error('No group found'), { statusCode: 404 });
      const start = this.stallPaging ? 0 : Number(q(req).start ?? '0');
      const limit = this.switches.pageSize(Number(q(req).limit), 200, 200);
      const results = group.members.slice(start, start + limit).map((id): UserAnswer => {
        const { accountStatus, ...user } = this.asUser(this.users.get(id)!);
        return { ...user, isActive: accountStatus === 'active' };
      });
      return { results, start, limit, size: results.length };
    });
    this.running = await listenOnLoopback(app);
    return this.running;
  }

  async stop(): Promise<void> {
    await this.running?.close();
    this.running = undefined;
  }

  private interrupt(reply: FastifyReply, interruption: Interruption) {
    switch (interruption.kind) {
      case 'rate-limited':
        return reply.code(429).header('retry-after', String(interruption.retryAfterSeconds)).send({ statusCode: 429, message: 'Rate limit exceeded' });
      case 'server-error':
        return reply.code(interruption.status).send({ statusCode: interruption.status, message: 'Service unavailable' });
      case 'unauthorized':
        return reply.code(401).send({ statusCode: 401, message: 'Unauthorized; scope does not match' });
      default: {
        const unreachable: never = interruption;
        throw new Error(`unknown interruption ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * CQL search over pages: `space = "KEY"`, `type = page` and `lastmodified >= "yyyy-MM-dd HH:mm"` joined by `and`,
   * with `order by lastmodified asc|desc`. The date is read in the account's `timeZone`; a wall-clock time a fall-back
   * repeats is read as the later of the two instants it names (the reading that skips the most). Pages follow `_links.next`, a relative URL carrying an opaque `cursor`.
   */
  private search(req: FastifyRequest): Models.ContentArray {
    const query = req.query as Record<string, string>;
    const [where, orderBy = 'lastmodified asc'] = (query.cql ?? '').split(/\s+order\s+by\s+/i);
    const filters = where.split(/\s+and\s+/i).map((clause): ((p: PageState) => boolean) => {
      const space = /^space\s*=\s*"?(\w+)"?$/i.exec(clause.trim());
      const type = /^type\s*=\s*"?page"?$/i.exec(clause.trim());
      const modified = /^lastmodified\s*>=\s*"(\d{4}-\d{2}-\d{2} \d{2}:\d{2})"$/i.exec(clause.trim());
      if (space) return (p) => p.spaceKey === space[1];
      if (type) return () => true;
      if (modified) {
        const bound = instantOfWallMinute(modified[1], this.timeZone);
        return (p) => Math.floor(Date.parse(p.lastModified) / 60_000) * 60_000 >= bound;
      }
      throw Object.assign(new Error(`Could not parse cql : ${clause}`), { statusCode: 400 });
    });
    const sign = /desc$/i.test(orderBy.trim()) ? -1 : 1;
    const all = [...this.pages.values()]
      .filter((p) => filters.every((f) => f(p)))
      .sort((a, b) => sign * (Date.parse(a.lastModified) - Date.parse(b.lastModified)) || a.id.localeCompare(b.id, 'en', { numeric: true }));
    const offset = query.cursor ? Number(Buffer.from(query.cursor, 'base64url').toString('utf8')) : 0;
    const limit = this.switches.pageSize(Number(query.limit), 25, 250);
    const results = all.slice(offset, offset + limit).map((p) => this.describePage(p, query.expand));
    const cursor = this.stallPaging ? (query.cursor ?? '') : Buffer.from(String(offset + limit)).toString('base64url');
    const next = new URLSearchParams({ cql: query.cql ?? '', limit: String(limit), cursor, next: 'true' });
    return { results, start: offset, limit, size: results.length, _links: links(req.url, offset + limit < all.length ? `/rest/api/content/search?${next}` : undefined) };
  }

  private describeSpace(space: SpaceState, expand = ''): Models.Space {
    const described: Models.Space = { id: space.id, key: space.key, name: space.name, type: 'global', status: 'current', _expandable: { permissions: `/rest/api/space/${space.key}?expand=permissions` }, _links: links(`/rest/api/space/${space.key}`) };
    if (!expand.split(',').includes('permissions')) return described;
    if (space.permissionsHidden) return { ...described, permissions: [] };
    const read: Models.SpacePermission = {
      operation: { operation: 'read', targetType: 'space' },
      subjects: {
        user: { results: space.readUsers.map((id) => this.asUser(this.users.get(id)!)), size: space.readUsers.length },
        group: { results: space.readGroups.map((id) => ({ type: 'group', id, name: this.groups.get(id)!.name, _links: links(`/rest/api/group/by-id?id=${id}`) })), size: space.readGroups.length },
        _expandable: {},
      },
      anonymousAccess: space.anonymousRead,
      unlicensedAccess: false,
    };
    return { ...described, permissions: [read] };
  }

  /**
   * A page with what `expand` asks for among version, ancestors (root first), body.storage, space and its read
   * restriction (`restrictions.read.restrictions.user` / `.group`, as Confluence expands them on content).
   */
  private describePage(page: PageState, expand = ''): Models.Content {
    const wanted = new Set(expand.split(','));
    const content: Models.Content = { id: page.id, type: 'page', status: 'current', title: page.title, _expandable: {}, _links: links(`/rest/api/content/${page.id}`, undefined) };
    if (wanted.has('version')) content.version = { by: this.asUser(this.users.values().next().value!), when: page.lastModified, friendlyWhen: page.lastModified, message: '', number: page.version, minorEdit: false, _expandable: { content: '', collaborators: '' }, _links: links(`/rest/api/content/${page.id}/version/${page.version}`) };
    if (wanted.has('ancestors')) content.ancestors = this.ancestorsOf(page).map((a) => ({ id: a.id, type: 'page', status: 'current', title: a.title, _expandable: {}, _links: links(`/rest/api/content/${a.id}`) }));
    if (wanted.has('body.storage')) content.body = { storage: { value: page.body, representation: 'storage', _expandable: {} }, _expandable: {} };
    if (wanted.has('space')) content.space = this.describeSpace(this.space(page.spaceKey));
    if (wanted.has('restrictions.read.restrictions.user') || wanted.has('restrictions.read.restrictions.group')) {
      content.restrictions = { read: this.readRestriction(page, 'read', 0, 100), _links: links(`/rest/api/content/${page.id}/restriction`) };
    }
    return content;
  }

  /**
   * A page's restriction for one operation, its users and its groups each paged by `start` and `limit` (100 when
   * expanded on content; a list cut there is read in full from the restriction endpoint).
   */
  private readRestriction(page: PageState, operation: string, start: number, limit: number): Models.ContentRestriction {
    const users = (operation === 'read' ? page.readUsers : []).slice(start, start + limit);
    const groups = (operation === 'read' ? page.readGroups : []).slice(start, start + limit);
    return {
      operation,
      restrictions: {
        user: { results: users.map((id) => this.asUser(this.users.get(id)!)), start, limit, size: users.length },
        group: { results: groups.map((id) => ({ type: 'group', id, name: this.groups.get(id)!.name, _links: links(`/rest/api/group/by-id?id=${id}`) })), start, limit, size: groups.length },
      },
      _expandable: { content: `/rest/api/content/${page.id}` },
      _links: links(`/rest/api/content/${page.id}/restriction/byOperation/${operation}`),
    };
  }

  private ancestorsOf(page: PageState): PageState[] {
    const chain: PageState[] = [];
    for (let parent = page.parentId; parent !== null; parent = this.page(parent).parentId) chain.unshift(this.page(parent));
    return chain;
  }

  private asUser(user: ConfluenceUser): UserAnswer {
    return {
      type: 'known', accountId: user.accountId, accountType: 'atlassian', accountStatus: user.accountStatus ?? 'active', email: user.email, publicName: user.displayName, displayName: user.displayName,
      profilePicture: { path: '/wiki/aa-avatar/default.png', width: 48, height: 48, isDefault: true }, _expandable: {}, _links: links(`/rest/api/user?accountId=${user.accountId}`),
    };
  }

  private tick(): string {
    this.clock += 90_000;
    return new Date(this.clock).toISOString();
  }

  private space(key: string): SpaceState {
    const space = this.spaces.get(key);
    if (space === undefined) throw Object.assign(new Error(`No space with key : ${key}`), { statusCode: 404 });
    return space;
  }

  private page(id: string): PageState {
    const page = this.pages.get(id);
    if (page === undefined) throw Object.assign(new Error(`No content found with id : ${id}`), { statusCode: 404 });
    return page;
  }
}

const wallClocks = new Map<string, Intl.DateTimeFormat>();

/**
 * The instant a wall-clock minute `yyyy-MM-dd HH:mm` names in `zone`: every quarter-hour offset from -14 h to +14 h is
 * tried, and the latest instant the zone shows as that minute wins.
 */
export function instantOfWallMinute(text: string, zone: string): number {
  let format = wallClocks.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('sv-SE', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' });
    wallClocks.set(zone, format);
  }
  const wall = Date.parse(`${text.replace(' ', 'T')}:00Z`);
  let latest: number | undefined;
  for (let offsetMinutes = -14 * 60; offsetMinutes <= 14 * 60; offsetMinutes += 15) {
    const at = wall - offsetMinutes * 60_000;
    if (format.format(at) === text && (latest === undefined || at > latest)) latest = at;
  }
  if (latest === undefined) throw Object.assign(new Error(`${text} does not exist in ${zone}`), { statusCode: 400 });
  return latest;
}
