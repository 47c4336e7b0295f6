import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RestEndpointMethodTypes } from '@octokit/rest';
import { createFakeApp, listenOnLoopback, type RunningFake } from '../loopback-server';
import { ScenarioSwitches, type Interruption } from '../scenario-switches';

type Endpoints = RestEndpointMethodTypes;
export type GitHubRepository = Endpoints['repos']['get']['response']['data'];
export type GitHubIssue = Endpoints['issues']['listForRepo']['response']['data'][number];
export type GitHubCollaborator = Endpoints['repos']['listCollaborators']['response']['data'][number];
export type GitHubPublicUser = Endpoints['users']['getByUsername']['response']['data'];
type GitHubRef = Endpoints['git']['getRef']['response']['data'];
type GitHubTree = Endpoints['git']['getTree']['response']['data'];
type GitHubContentFile = Extract<Endpoints['repos']['getContent']['response']['data'], { type: 'file' }>;
type GitHubContentDirectory = Extract<Endpoints['repos']['getContent']['response']['data'], unknown[]>;
type GitHubBlob = Endpoints['git']['getBlob']['response']['data'];
export type GitHubIssueComment = Endpoints['issues']['listComments']['response']['data'][number];

/** One recorded request and response of an `@octokit/fixtures` scenario (its normalized-fixture.json). */
interface RecordedExchange {
  method: string;
  path: string;
  status: number;
  response: unknown;
}

/** Recorded api.github.com exchanges shipped in `@octokit/fixtures`, read as data (the package's code is not used). */
function recordedScenario(name: string): RecordedExchange[] {
  const path = require.resolve(`@octokit/fixtures/scenarios/api.github.com/${name}/normalized-fixture.json`);
  return JSON.parse(readFileSync(path, 'utf8')) as RecordedExchange[];
}

/** Git's object id of a blob: sha1 over `blob <size>\0<content>`, so a file's sha changes exactly when its bytes do. */
const blobSha = (content: string): string =>
  createHash('sha1').update(`blob ${Buffer.byteLength(content)}\0`).update(content).digest('hex');

/** A repository of the fake: its description, default-branch files, issues (pull requests included), collaborators. */
interface RepositoryState {
  repository: GitHubRepository;
  files: Map<string, string>;
  issues: GitHubIssue[];
  collaborators: GitHubCollaborator[];
  /** whether the collaborator listing is refused, as GitHub refuses it to a token without push access */
  collaboratorsHidden?: boolean;
  /** every commit the default branch pointed at, by sha: its files, so a tree of an older commit can be read */
  commits: Map<string, Map<string, string>>;
  /** comments by issue number */
  comments: Map<number, GitHubIssueComment[]>;
}

/**
 * A fake of the GitHub REST API (the endpoints a repository connector calls), holding repositories in memory.
 * Lists page by `page`/`per_page` with an RFC 8288 Link header (first, prev, next, last), as GitHub does; failures
 * carry GitHub's `{ message, documentation_url }` body; throttling is a secondary rate limit (403 or 429 with
 * Retry-After) or, with `rateLimitStyle = 'primary'`, an exhausted quota (403, x-ratelimit-remaining 0 and a reset time).
 */
export class GitHubFake {
  readonly switches: ScenarioSwitches;
  rateLimitStyle: 'secondary-403' | 'secondary-429' | 'primary' = 'secondary-403';
  /** When set, throttled responses name this instant as `x-ratelimit-reset` instead of now + Retry-After. */
  rateLimitResetAt: Date | undefined;
  /** Every blob ever written, by its git object id, as GitHub keeps them. */
  private readonly blobs = new Map<string, string>();
  /** Tokens refused as revoked until accepted again (the switches' revocation is for good). */
  private readonly refusedTokens = new Set<string>();
  private readonly repositories = new Map<string, RepositoryState>();
  private readonly users = new Map<string, GitHubPublicUser>();
  /** Redirects answered instead of a route, by request path and query: where to and with which status. */
  private readonly redirects = new Map<string, { location: string; status: number }>();
  /** Sizes a tree reports instead of a blob's real size, by `<owner/name>:<path>`. */
  private readonly reportedSizes = new Map<string, number>();
  /** Requests still to answer with headers and the start of a body, then nothing more (a stalled response). */
  private stallsPending = 0;
  private readonly stalled: ServerResponse[] = [];
  /**
   * When set, every list page says there is a next page and links it to the page just read, as a server whose
   * pagination never ends would.
   */
  endlessPages = false;
  private running: RunningFake | undefined;

  constructor(readonly token = 'ghp_faketoken000000000000000000000000001') {
    this.switches = new ScenarioSwitches(new Set([token]));
  }

  /**
   * Seeds the fake from recorded responses: `octokit-fixture-org/hello-world` (its repository record and README) and
   * `octokit-fixture-org/paginate-issues` (its thirteen issues), both public, plus the two users of the recorded
   * collaborator list, whose public emails are hidden until a test sets them.
   */
  loadOctokitFixtures(): void {
    const helloWorld = recordedScenario('get-repository')[0].response as GitHubRepository;
    const readme = recordedScenario('get-content').find((e) => e.path.endsWith('/README.md'))!.response as string;
    this.addRepository(helloWorld, { 'README.md': readme });

    const paginateIssues = this.renamed(helloWorld, 'paginate-issues', 1001);
    const issues = recordedScenario('paginate-issues').flatMap((e) => e.response as GitHubIssue[]);
    this.addRepository(paginateIssues, {}, issues);

    const collaborators = recordedScenario('add-and-remove-repository-collaborator').filter(
      (e) => e.method === 'get' && e.path.endsWith('/collaborators'),
    )[0].response as GitHubCollaborator[];
    for (const c of collaborators) this.addUser(c, null);
    this.recordedCollaborators = collaborators;
  }

  /** The collaborator list recorded in `@octokit/fixtures` (two users), for tests that make a private repository. */
  recordedCollaborators: GitHubCollaborator[] = [];

  addRepository(repository: GitHubRepository, files: Record<string, string> = {}, issues: GitHubIssue[] = [], collaborators: GitHubCollaborator[] = []): void {
    this.repositories.set(repository.full_name, {
      repository: { ...repository }, files: new Map(Object.entries(files)), issues: [...issues], collaborators: [...collaborators], commits: new Map(), comments: new Map(),
    });
    this.commit(repository.full_name);
  }

  /** Records the default branch's current files as a commit (its sha is `headSha`) and keeps their blobs. */
  private commit(fullName: string): void {
    const state = this.state(fullName);
    for (const content of state.files.values()) this.blobs.set(blobSha(content), content);
    state.commits.set(this.headSha(fullName), new Map(state.files));
  }

  /** A copy of a recorded repository under another name and id, its URLs rewritten to match. */
  renamed(template: GitHubRepository, name: string, id: number): GitHubRepository {
    const json = JSON.stringify(template).replaceAll(`/${template.name}`, `/${name}`).replaceAll(`"${template.full_name}"`, `"${template.owner.login}/${name}"`);
    return { ...(JSON.parse(json) as GitHubRepository), id, name, full_name: `${template.owner.login}/${name}` };
  }

  addUser(user: Pick<GitHubCollaborator, 'login' | 'id' | 'node_id' | 'avatar_url' | 'html_url' | 'url' | 'type'>, email: string | null): void {
    const base = `https://api.github.com/users/${user.login}`;
    this.users.set(user.login, {
      login: user.login, id: user.id, node_id: user.node_id, avatar_url: user.avatar_url, gravatar_id: '', url: user.url, html_url: user.html_url,
      followers_url: `${base}/followers`, following_url: `${base}/following{/other_user}`, gists_url: `${base}/gists{/gist_id}`,
      starred_url: `${base}/starred{/owner}{/repo}`, subscriptions_url: `${base}/subscriptions`, organizations_url: `${base}/orgs`,
      repos_url: `${base}/repos`, events_url: `${base}/events{/privacy}`, received_events_url: `${base}/received_events`,
      type: user.type, site_admin: false, name: null, company: null, blog: null, location: null, email, hireable: null, bio: null,
      public_repos: 0, public_gists: 0, followers: 0, following: 0, created_at: '2017-10-10T16:00:00Z', updated_at: '2017-10-10T16:00:00Z',
    });
  }

  /** Refuses a token with 401 Bad credentials, as GitHub refuses a revoked one, until `acceptToken`. */
  refuseToken(token: string): void {
    this.refusedTokens.add(token);
  }

  acceptToken(token: string): void {
    this.refusedTokens.delete(token);
  }

  /** Shows or hides a user's public email: what decides whether a private repository's collaborators resolve. */
  setPublicEmail(login: string, email: string | null): void {
    const user = this.users.get(login);
    if (user === undefined) throw new Error(`no user ${login}`);
    user.email = email;
  }

  /**
   * Changes visibility only; nothing in the repository's content or issues moves. An internal repository (GitHub
   * Enterprise: readable by every member of the enterprise) is not public: GitHub reports it with `private: true`.
   */
  setVisibility(fullName: string, visibility: 'public' | 'private' | 'internal'): void {
    const { repository } = this.state(fullName);
    repository.private = visibility !== 'public';
    repository.visibility = visibility;
  }

  /**
   * Answers a request for `pathAndQuery` (as the client sends it, e.g. `/repos/o/r`) with a redirect to `location`
   * instead of the route, before the token is looked at, as a host that redirects every caller would.
   */
  redirect(pathAndQuery: string, location: string, status = 302): void {
    this.redirects.set(pathAndQuery, { location, status });
  }

  /** Makes the tree report `size` for a file instead of its real size (the blob itself keeps its real content). */
  misreportSize(fullName: string, path: string, size: number): void {
    this.reportedSizes.set(`${fullName}:${path}`, size);
  }

  /** The next `times` requests get their status line, headers and the start of a body, and then nothing more. */
  stallNext(times = 1): void {
    this.stallsPending += times;
  }

  /** Refuses the collaborator listing (403) as GitHub does for a token without push access to the repository. */
  hideCollaborators(fullName: string): void {
    this.state(fullName).collaboratorsHidden = true;
  }

  addCollaborator(fullName: string, collaborator: GitHubCollaborator): void {
    this.state(fullName).collaborators.push(collaborator);
  }

  removeCollaborator(fullName: string, login: string): void {
    const state = this.state(fullName);
    state.collaborators = state.collaborators.filter((c) => c.login !== login);
  }

  /** Writes (or, with null, deletes) a file on the default branch, which moves the branch head. */
  writeFile(fullName: string, path: string, content: string | null): void {
    const state = this.state(fullName);
    if (content === null) state.files.delete(path);
    else state.files.set(path, content);
    this.commit(fullName);
  }

  /**
   * Adds a comment to an issue. As on GitHub, the issue's `comments` count goes up and its `updated_at` moves to the
   * comment's time.
   */
  addComment(fullName: string, issueNumber: number, fields: Pick<GitHubIssueComment, 'body' | 'created_at'> & { login?: string }): GitHubIssueComment {
    const state = this.state(fullName);
    const issue = this.issue(fullName, issueNumber);
    const list = state.comments.get(issueNumber) ?? [];
    const id = 90_000 + list.length + 100 * issueNumber;
    const user = issue.user ? { ...issue.user, ...(fields.login ? { login: fields.login } : {}) } : null;
    const comment: GitHubIssueComment = {
      id, node_id: `IC_${id}`, url: `${state.repository.url}/issues/comments/${id}`, html_url: `${issue.html_url}#issuecomment-${id}`, body: fields.body,
      user, created_at: fields.created_at, updated_at: fields.created_at, issue_url: issue.url, author_association: 'MEMBER',
    };
    list.push(comment);
    state.comments.set(issueNumber, list);
    Object.assign(issue, { comments: list.length, updated_at: fields.created_at });
    return comment;
  }

  /** Drops a commit that is no longer the head, as garbage collection does after a force-push: its tree is gone. */
  forgetCommit(fullName: string, sha: string): void {
    if (sha === this.headSha(fullName)) throw new Error('the head commit cannot be forgotten');
    this.state(fullName).commits.delete(sha);
  }

  /** Adds an issue (or, with `pull_request` set, a pull request) cloned from an existing one, with these fields. */
  addIssue(fullName: string, fields: Partial<GitHubIssue> & Pick<GitHubIssue, 'number' | 'title' | 'created_at' | 'updated_at'>): GitHubIssue {
    const state = this.state(fullName);
    const template = state.issues[0] ?? this.anyIssue();
    const { url } = state.repository;
    const issue: GitHubIssue = {
      ...template, id: 5000 + fields.number, body: null, comments: 0, closed_at: null, state: 'open', labels: [],
      repository_url: url, url: `${url}/issues/${fields.number}`, html_url: `${state.repository.html_url}/issues/${fields.number}`,
      comments_url: `${url}/issues/${fields.number}/comments`, ...fields,
    };
    delete issue.pull_request;
    if (fields.pull_request) issue.pull_request = fields.pull_request;
    state.issues.push(issue);
    return issue;
  }

  /** Edits an issue and sets its updated_at, which may be back-dated (imports and clock skew do that). */
  editIssue(fullName: string, issueNumber: number, fields: Partial<GitHubIssue>): void {
    Object.assign(this.issue(fullName, issueNumber), fields);
  }

  /** A deleted issue is gone: GitHub lists it nowhere and sends no tombstone, so only pruning finds it. */
  deleteIssue(fullName: string, issueNumber: number): void {
    const state = this.state(fullName);
    state.issues = state.issues.filter((i) => i.number !== issueNumber);
  }

  /** The commit sha the default branch points at: a digest of every path and blob, so it moves with any file change. */
  headSha(fullName: string): string {
    const hash = createHash('sha1');
    for (const [path, content] of [...this.state(fullName).files].sort(([a], [b]) => a.localeCompare(b))) hash.update(`${path}\0${blobSha(content)}\n`);
    return hash.digest('hex');
  }

  async start(): Promise<RunningFake> {
    const app = createFakeApp();
    app.addHook('onRequest', async (req, reply) => {
      const redirect = this.redirects.get(req.url);
      if (redirect !== undefined) return reply.code(redirect.status).header('location', redirect.location).send({ message: 'Moved', url: redirect.location });
      if (this.stallsPending > 0) {
        this.stallsPending--;
        this.switches.answered(req.method, req.url);
        reply.hijack();
        reply.raw.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        reply.raw.write('{"message":');
        this.stalled.push(reply.raw);
        return reply;
      }
      const token = this.tokenOf(req);
      if (token !== undefined && this.refusedTokens.has(token)) return this.interrupt(reply, { kind: 'unauthorized', reason: 'revoked' });
      const interruption = this.switches.intercept(token);
      if (interruption !== undefined) return this.interrupt(reply, interruption);
    });
    app.addHook('onSend', async (req, reply) => {
      this.switches.answered(req.method, req.url);
      reply.header('x-github-api-version-selected', '2022-11-28');
    });
    app.setErrorHandler((error: { statusCode?: number; message: string }, _req, reply) =>
      reply.code(error.statusCode ?? 500).send({ message: error.statusCode === 404 ? 'Not Found' : error.message, documentation_url: 'https://docs.github.com/rest' }),
    );
    app.setNotFoundHandler((_req, reply) => reply.code(404).send({ message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' }));

    app.get('/user', () => ({ login: 'crs-connector', id: 9000, type: 'User' }));
    app.get('/user/repos', (req, reply) => this.page(req, reply, this.repositoryList(req), 30));
    app.get('/orgs/:org/repos', (req, reply) => {
      const { org } = req.params as { org: string };
      return this.page(req, reply, this.repositoryList(req).filter((r) => r.owner.login === org), 30);
    });
    app.get('/repos/:owner/:repo', (req) => this.repositoryOf(req).repository);
    app.get('/repos/:owner/:repo/git/ref/*', (req, reply) => this.ref(req, reply));
    app.get('/repos/:owner/:repo/git/trees/:sha', (req, reply) => this.tree(req, reply));
    app.get('/repos/:owner/:repo/git/blobs/:sha', (req, reply) => this.blob(req, reply));
    app.get('/repos/:owner/:repo/readme', (req, reply) => this.content(req, reply, 'README.md'));
    app.get('/repos/:owner/:repo/contents/*', (req, reply) => this.content(req, reply, (req.params as { '*': string })['*']));
    app.get('/repos/:owner/:repo/issues', (req, reply) => this.page(req, reply, this.issueList(req), 30));
    app.get('/repos/:owner/:repo/issues/:number', (req, reply) => {
      const issue = this.repositoryOf(req).issues.find((i) => i.number === Number((req.params as { number: string }).number));
      return issue ?? reply.code(404).send({ message: 'Not Found', documentation_url: 'https://docs.github.com/rest/issues/issues#get-an-issue', status: '404' });
    });
    app.get('/repos/:owner/:repo/issues/:number/comments', (req, reply) => {
      const state = this.repositoryOf(req);
      const issueNumber = Number((req.params as { number: string }).number);
      if (!state.issues.some((i) => i.number === issueNumber)) return reply.code(404).send({ message: 'Not Found', status: '404' });
      return this.page(req, reply, state.comments.get(issueNumber) ?? [], 30);
    });
    app.get('/repos/:owner/:repo/collaborators', (req, reply) => {
      const state = this.repositoryOf(req);
      if (state.collaboratorsHidden) return reply.code(403).send({ message: 'Must have push access to view repository collaborators.', documentation_url: 'https://docs.github.com/rest/collaborators/collaborators#list-repository-collaborators', status: '403' });
      return this.page(req, reply, state.collaborators, 30);
    });
    app.get('/users/:username', (req, reply) => {
      const user = this.users.get((req.params as { username: string }).username);
      return user ?? reply.code(404).send({ message: 'Not Found', documentation_url: 'https://docs.github.com/rest/users/users#get-a-user', status: '404' });
    });
    this.running = await listenOnLoopback(app);
    return this.running;
  }

  async stop(): Promise<void> {
    for (const res of this.stalled.splice(0)) res.destroy();
    await this.running?.close();
    this.running = undefined;
  }

  /** Octokit sends `token <t>` for personal access tokens and `bearer <t>` for app tokens; GitHub takes both. */
  private tokenOf(req: FastifyRequest): string | undefined {
    const match = /^(?:token|bearer)\s+(.+)$/i.exec(req.headers.authorization ?? '');
    return match?.[1];
  }

  private interrupt(reply: FastifyReply, interruption: Interruption) {
    switch (interruption.kind) {
      case 'rate-limited': {
        const resetAt = this.rateLimitResetAt ? Math.floor(this.rateLimitResetAt.getTime() / 1000) : Math.ceil(Date.now() / 1000) + interruption.retryAfterSeconds;
        reply.header('x-ratelimit-limit', '5000').header('x-ratelimit-reset', String(resetAt)).header('x-ratelimit-resource', 'core');
        if (this.rateLimitStyle === 'primary') {
          return reply.code(403).header('x-ratelimit-remaining', '0').send({ message: 'API rate limit exceeded for user ID 9000.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api', status: '403' });
        }
        const status = this.rateLimitStyle === 'secondary-429' ? 429 : 403;
        return reply.code(status).header('x-ratelimit-remaining', '4990').header('retry-after', String(interruption.retryAfterSeconds)).send({
          message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
          documentation_url: 'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
          status: String(status),
        });
      }
      case 'server-error':
        return reply.code(interruption.status).send({ message: 'Server Error', status: String(interruption.status) });
      case 'unauthorized':
        return reply.code(401).send({ message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
      default: {
        const unreachable: never = interruption;
        throw new Error(`unknown interruption ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * One page of a list by `page` and `per_page` (default `perPageDefault`, at most 100), with the Link header GitHub
   * sends: absolute URLs to the first, previous, next and last pages, omitting those that do not apply.
   */
  private page<T>(req: FastifyRequest, reply: FastifyReply, items: T[], perPageDefault: number): T[] {
    const query = req.query as Record<string, string>;
    const perPage = this.switches.pageSize(Number(query.per_page), perPageDefault, 100);
    const page = Math.max(1, Number(query.page ?? '1') || 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const url = new URL(req.url, `http://${req.headers.host}`);
    const linkTo = (p: number, rel: string) => {
      url.searchParams.set('page', String(p));
      url.searchParams.set('per_page', String(perPage));
      return `<${url.toString()}>; rel="${rel}"`;
    };
    if (this.endlessPages) {
      reply.header('link', linkTo(page, 'next'));
      return items.slice((page - 1) * perPage, page * perPage);
    }
    const links = [
      ...(page > 1 ? [linkTo(page - 1, 'prev')] : []),
      ...(page < last ? [linkTo(page + 1, 'next'), linkTo(last, 'last')] : []),
      ...(page > 1 ? [linkTo(1, 'first')] : []),
    ];
    if (links.length > 0) reply.header('link', links.join(', '));
    return items.slice((page - 1) * perPage, page * perPage);
  }

  private repositoryList(req: FastifyRequest): GitHubRepository[] {
    const { visibility = 'all' } = req.query as Record<string, string>;
    return [...this.repositories.values()]
      .map((s) => s.repository)
      .filter((r) => visibility === 'all' || r.visibility === visibility)
      .sort((a, b) => a.full_name.localeCompare(b.full_name));
  }

  /** `/issues` as GitHub answers it: pull requests included, `state` open by default, `since` on updated_at, sorted. */
  private issueList(req: FastifyRequest): GitHubIssue[] {
    const { state = 'open', since, sort = 'created', direction = 'desc' } = req.query as Record<string, string>;
    const key = sort === 'updated' ? 'updated_at' : 'created_at';
    const sign = direction === 'asc' ? 1 : -1;
    return this.repositoryOf(req)
      .issues.filter((i) => state === 'all' || i.state === state)
      .filter((i) => since === undefined || Date.parse(i.updated_at) >= Date.parse(since))
      .sort((a, b) => sign * (Date.parse(a[key]) - Date.parse(b[key]) || a.number - b.number));
  }

  private ref(req: FastifyRequest, reply: FastifyReply): GitHubRef | FastifyReply {
    const state = this.repositoryOf(req);
    const ref = (req.params as { '*': string })['*'];
    if (ref !== `heads/${state.repository.default_branch}`) return reply.code(404).send({ message: 'Not Found', status: '404' });
    const sha = this.headSha(state.repository.full_name);
    return { ref: `refs/${ref}`, node_id: 'MDM6UmVmMQ==', url: `${state.repository.url}/git/refs/${ref}`, object: { sha, type: 'commit', url: `${state.repository.url}/git/commits/${sha}` } };
  }

  /**
   * The tree of a commit (the default branch's name, its head or any earlier commit sha), flat with `recursive`: every
   * path with its blob sha, enough to diff two syncs.
   */
  private tree(req: FastifyRequest, reply: FastifyReply): GitHubTree | FastifyReply {
    const state = this.repositoryOf(req);
    const { sha: asked } = req.params as { sha: string };
    const sha = asked === state.repository.default_branch ? this.headSha(state.repository.full_name) : asked;
    const files = state.commits.get(sha);
    if (files === undefined) return reply.code(404).send({ message: 'Not Found', documentation_url: 'https://docs.github.com/rest/git/trees#get-a-tree', status: '404' });
    // A recursive tree lists every folder (type `tree`) as well as every file (type `blob`).
    const blobs = [...files].map(([path, content]) => ({
      path, mode: '100644', type: 'blob', sha: blobSha(content), size: this.reportedSizes.get(`${state.repository.full_name}:${path}`) ?? Buffer.byteLength(content), url: `${state.repository.url}/git/blobs/${blobSha(content)}`,
    }));
    const folderPaths = new Set([...files.keys()].flatMap((p) => p.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    const folders = [...folderPaths].map((path) => ({ path, mode: '040000', type: 'tree', sha: blobSha(`${sha}:${path}`), url: `${state.repository.url}/git/trees/${blobSha(`${sha}:${path}`)}` }));
    return {
      sha,
      url: `${state.repository.url}/git/trees/${sha}`,
      truncated: false,
      tree: [...folders, ...blobs].sort((a, b) => a.path.localeCompare(b.path)),
    };
  }

  /** A blob by its object id, base64 as GitHub sends it (GitHub keeps every blob a commit ever had). */
  private blob(req: FastifyRequest, reply: FastifyReply): GitHubBlob | FastifyReply {
    const state = this.repositoryOf(req);
    const { sha } = req.params as { sha: string };
    const content = this.blobs.get(sha);
    if (content === undefined) return reply.code(404).send({ message: 'Not Found', documentation_url: 'https://docs.github.com/rest/git/blobs#get-a-blob', status: '404' });
    return { sha, node_id: `B_${sha.slice(0, 12)}`, size: Buffer.byteLength(content), url: `${state.repository.url}/git/blobs/${sha}`, content: Buffer.from(content).toString('base64'), encoding: 'base64' };
  }

  /** A file as base64 JSON, or its raw bytes when asked with the `raw` media type; a folder as a list of entries. */
  private content(req: FastifyRequest, reply: FastifyReply, path: string) {
    const state = this.repositoryOf(req);
    const content = state.files.get(path);
    const { repository } = state;
    const describe = (p: string, c: string, withContent: boolean): GitHubContentFile => ({
      type: 'file', encoding: 'base64', size: Buffer.byteLength(c), name: p.split('/').at(-1)!, path: p, content: withContent ? Buffer.from(c).toString('base64') : '',
      sha: blobSha(c), url: `${repository.url}/contents/${p}?ref=${repository.default_branch}`, git_url: `${repository.url}/git/blobs/${blobSha(c)}`,
      html_url: `${repository.html_url}/blob/${repository.default_branch}/${p}`, download_url: null,
      _links: { self: `${repository.url}/contents/${p}`, git: `${repository.url}/git/blobs/${blobSha(c)}`, html: `${repository.html_url}/blob/${repository.default_branch}/${p}` },
    });
    if (content !== undefined) {
      if (String(req.headers.accept).includes('application/vnd.github.raw') || String(req.headers.accept).includes('application/vnd.github.v3.raw')) {
        return reply.type('text/plain; charset=utf-8').send(content);
      }
      return describe(path, content, true);
    }
    const prefix = path === '' ? '' : `${path.replace(/\/$/, '')}/`;
    const entries = new Map<string, GitHubContentDirectory[number]>();
    for (const [p, c] of [...state.files].filter(([p]) => p.startsWith(prefix)).sort(([a], [b]) => a.localeCompare(b))) {
      const [name, ...deeper] = p.slice(prefix.length).split('/');
      if (deeper.length === 0) entries.set(name, { ...describe(p, c, false), content: undefined });
      else if (!entries.has(name)) entries.set(name, { ...describe(`${prefix}${name}`, '', false), type: 'dir', size: 0, sha: blobSha(`${prefix}${name}`), content: undefined });
    }
    if (entries.size === 0) return reply.code(404).send({ message: 'Not Found', documentation_url: 'https://docs.github.com/rest/repos/contents#get-repository-content', status: '404' });
    const listing: GitHubContentDirectory = [...entries.values()];
    return listing;
  }

  private repositoryOf(req: FastifyRequest): RepositoryState {
    const { owner, repo } = req.params as { owner: string; repo: string };
    return this.state(`${owner}/${repo}`);
  }

  private state(fullName: string): RepositoryState {
    const state = this.repositories.get(fullName);
    if (state === undefined) throw Object.assign(new Error(`no repository ${fullName}`), { statusCode: 404 });
    return state;
  }

  private issue(fullName: string, issueNumber: number): GitHubIssue {
    const issue = this.state(fullName).issues.find((i) => i.number === issueNumber);
    if (issue === undefined) throw new Error(`no issue #${issueNumber} in ${fullName}`);
    return issue;
  }

  private anyIssue(): GitHubIssue {
    for (const state of this.repositories.values()) if (state.issues[0] !== undefined) return state.issues[0];
    throw new Error('no issue to copy: load the recorded fixtures first');
  }
}
