import { Octokit } from '@octokit/rest';
import { throttling } from '@octokit/plugin-throttling';
import { retry } from '@octokit/plugin-retry';
import { RequestError } from '@octokit/request-error';
import type { RunningFake } from '../loopback-server';
import { GitHubFake } from './github-fake';

/** The client the code-host connector will use: Octokit with its throttling and retry plugins. */
const ConnectorOctokit = Octokit.plugin(throttling, retry);
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const ORG = 'octokit-fixture-org';

describe('GitHub REST API fake, driven by @octokit/rest with throttling and retry', () => {
  let fake: GitHubFake;
  let server: RunningFake;
  let onRateLimit: jest.Mock<boolean, [number]>;
  let onSecondaryRateLimit: jest.Mock<boolean, [number]>;
  let github: InstanceType<typeof ConnectorOctokit>;

  const client = (token = fake.token) =>
    new ConnectorOctokit({
      auth: token,
      baseUrl: server.url,
      log: silent,
      throttle: { onRateLimit, onSecondaryRateLimit },
      // A short base keeps the retry plugin's (n + 1)² backoff on 5xx in milliseconds.
      retry: { retryAfterBaseValue: 10 },
    });

  beforeEach(async () => {
    fake = new GitHubFake();
    fake.loadOctokitFixtures();
    server = await fake.start();
    onRateLimit = jest.fn((_retryAfter: number) => false);
    onSecondaryRateLimit = jest.fn((_retryAfter: number) => false);
    github = client();
  });

  afterEach(() => fake.stop());

  it('lists the repositories recorded in @octokit/fixtures through Link headers', async () => {
    const repos = await github.paginate(github.repos.listForAuthenticatedUser, { per_page: 1 });
    expect(repos.map((r) => [r.full_name, r.private, r.visibility])).toEqual([
      [`${ORG}/hello-world`, false, 'public'],
      [`${ORG}/paginate-issues`, false, 'public'],
    ]);
    expect(fake.switches.requests).toEqual(['GET /user/repos?per_page=1', `GET /user/repos?per_page=1&page=2`]);
  });

  it('reads the recorded README as base64 JSON and as raw bytes', async () => {
    const readme = await github.repos.getReadme({ owner: ORG, repo: 'hello-world' });
    expect(Buffer.from(readme.data.content, 'base64').toString('utf8')).toBe('# hello-world');
    expect(readme.data.sha).toBe('93a078d1c3f76aa1ca11def8f882a06df1d4a01b');
    const raw = await github.repos.getContent({ owner: ORG, repo: 'hello-world', path: 'README.md', mediaType: { format: 'raw' } });
    expect(raw.data).toBe('# hello-world');
  });

  it('pages through the thirteen recorded issues, newest first, following rel="next"', async () => {
    const issues = await github.paginate(github.issues.listForRepo, { owner: ORG, repo: 'paginate-issues', state: 'all', per_page: 3 });
    expect(issues.map((i) => i.number)).toEqual([13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(issues[0]).toMatchObject({ title: 'Test issue 13', user: { login: 'octokit-fixture-user-a' } });
    expect(fake.switches.requests).toHaveLength(5);
  });

  it('moves the default branch head with each file change, and the tree shows what changed', async () => {
    const ref = async () => (await github.git.getRef({ owner: ORG, repo: 'hello-world', ref: 'heads/master' })).data.object.sha;
    const tree = async (sha: string) => (await github.git.getTree({ owner: ORG, repo: 'hello-world', tree_sha: sha, recursive: 'true' })).data.tree.map((e) => [e.path, e.sha]);
    const first = await ref();
    expect(await tree(first)).toEqual([['README.md', '93a078d1c3f76aa1ca11def8f882a06df1d4a01b']]);

    fake.writeFile(`${ORG}/hello-world`, 'docs/guide.md', '# Guide\n');
    fake.writeFile(`${ORG}/hello-world`, 'README.md', null);
    const second = await ref();
    expect(second).not.toBe(first);
    expect((await tree(second)).map(([path]) => path)).toEqual(['docs', 'docs/guide.md']);
    // the earlier commit's tree and blobs are still there, as on GitHub
    expect(await tree(first)).toEqual([['README.md', '93a078d1c3f76aa1ca11def8f882a06df1d4a01b']]);
    const blob = await github.git.getBlob({ owner: ORG, repo: 'hello-world', file_sha: '93a078d1c3f76aa1ca11def8f882a06df1d4a01b' });
    expect(Buffer.from(blob.data.content, 'base64').toString('utf8')).toBe('# hello-world');
    const docs = await github.repos.getContent({ owner: ORG, repo: 'hello-world', path: 'docs' });
    expect(Array.isArray(docs.data) && docs.data.map((e) => [e.type, e.path])).toEqual([['file', 'docs/guide.md']]);
    expect(await ref()).toBe(second);
  });

  it('follows issues with since, and only a full listing shows a deleted one is gone', async () => {
    const repo = `${ORG}/paginate-issues`;
    fake.addIssue(repo, { number: 14, title: 'Opened after the last sync', created_at: '2024-05-01T10:00:00Z', updated_at: '2024-05-01T10:00:00Z' });
    fake.addIssue(repo, { number: 15, title: 'A pull request', created_at: '2024-05-01T11:00:00Z', updated_at: '2024-05-01T11:00:00Z', pull_request: { url: 'https://api.github.com/repos/octokit-fixture-org/paginate-issues/pulls/15', html_url: null, diff_url: null, patch_url: null } });
    fake.editIssue(repo, 5, { title: 'Test issue 5, edited', updated_at: '2024-05-01T12:00:00Z' });
    fake.deleteIssue(repo, 7);

    const since = await github.paginate(github.issues.listForRepo, { owner: ORG, repo: 'paginate-issues', state: 'all', since: '2024-01-01T00:00:00Z', sort: 'updated', direction: 'asc' });
    expect(since.map((i) => [i.number, i.title, i.pull_request !== undefined])).toEqual([
      [14, 'Opened after the last sync', false],
      [15, 'A pull request', true],
      [5, 'Test issue 5, edited', false],
    ]);
    const all = await github.paginate(github.issues.listForRepo, { owner: ORG, repo: 'paginate-issues', state: 'all', per_page: 100 });
    expect(all).toHaveLength(14);
    expect(all.some((i) => i.number === 7)).toBe(false);
  });

  it('lists an issue\'s comments, each of which moves the issue\'s updated_at and count, and reads one issue', async () => {
    const repo = `${ORG}/paginate-issues`;
    fake.addComment(repo, 4, { body: 'First reply', created_at: '2024-07-01T00:00:00Z' });
    fake.addComment(repo, 4, { body: 'Second reply', created_at: '2024-07-02T00:00:00Z', login: 'octokit-fixture-user-b' });
    const comments = await github.paginate(github.issues.listComments, { owner: ORG, repo: 'paginate-issues', issue_number: 4, per_page: 1 });
    expect(comments.map((c) => [c.body, c.user?.login])).toEqual([['First reply', 'octokit-fixture-user-a'], ['Second reply', 'octokit-fixture-user-b']]);
    const issue = await github.issues.get({ owner: ORG, repo: 'paginate-issues', issue_number: 4 });
    expect(issue.data).toMatchObject({ number: 4, comments: 2, updated_at: '2024-07-02T00:00:00Z' });
    const gone = (await github.issues.get({ owner: ORG, repo: 'paginate-issues', issue_number: 99 }).catch((e: unknown) => e)) as RequestError;
    expect(gone.status).toBe(404);
  });

  it('hides a back-dated update from a since query; only an overlap or a full listing finds it', async () => {
    fake.editIssue(`${ORG}/paginate-issues`, 3, { title: 'Imported with its old date', updated_at: '2017-10-10T15:59:00Z' });
    const since = await github.issues.listForRepo({ owner: ORG, repo: 'paginate-issues', state: 'all', since: '2017-10-10T16:00:00Z' });
    expect(since.data.map((i) => i.number)).not.toContain(3);
    const overlap = await github.issues.listForRepo({ owner: ORG, repo: 'paginate-issues', state: 'all', since: '2017-10-10T15:00:00Z' });
    expect(overlap.data.find((i) => i.number === 3)).toMatchObject({ title: 'Imported with its old date' });
  });

  it('skips an issue when one already read is edited mid-crawl in updated order, and not in created order', async () => {
    const crawl = async (sort: 'updated' | 'created') => {
      fake.switches.afterRequests(1, () => fake.editIssue(`${ORG}/paginate-issues`, 2, { updated_at: `2024-06-0${sort === 'updated' ? 1 : 2}T00:00:00Z` }));
      return (await github.paginate(github.issues.listForRepo, { owner: ORG, repo: 'paginate-issues', state: 'all', sort, direction: 'asc', per_page: 3 })).map((i) => i.number);
    };
    const byUpdated = await crawl('updated');
    expect(byUpdated).toEqual([1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 2]);
    const byCreated = await crawl('created');
    expect(byCreated).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  });

  it('captures visibility and collaborators, and whose public email is visible', async () => {
    const repo = `${ORG}/hello-world`;
    fake.setVisibility(repo, 'private');
    for (const c of fake.recordedCollaborators) fake.addCollaborator(repo, c);
    fake.setPublicEmail('octokit-fixture-user-a', 'a@example.test');

    expect((await github.repos.get({ owner: ORG, repo: 'hello-world' })).data).toMatchObject({ private: true, visibility: 'private' });
    const collaborators = await github.paginate(github.repos.listCollaborators, { owner: ORG, repo: 'hello-world', affiliation: 'all', per_page: 1 });
    expect(collaborators.map((c) => [c.login, c.role_name])).toEqual([['octokit-fixture-user-a', 'admin'], ['octokit-fixture-user-b', 'write']]);
    const emails = await Promise.all(collaborators.map(async (c) => (await github.users.getByUsername({ username: c.login })).data.email));
    expect(emails).toEqual(['a@example.test', null]);

    fake.removeCollaborator(repo, 'octokit-fixture-user-b');
    expect((await github.repos.listCollaborators({ owner: ORG, repo: 'hello-world' })).data.map((c) => c.login)).toEqual(['octokit-fixture-user-a']);
  });

  it('waits out a secondary rate limit (403, Retry-After) when the handler asks to retry', async () => {
    onSecondaryRateLimit.mockImplementation(() => true);
    fake.switches.rateLimitNext(1, 1);
    const started = Date.now();
    const repo = await github.repos.get({ owner: ORG, repo: 'hello-world' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(repo.data.name).toBe('hello-world');
    expect(onSecondaryRateLimit).toHaveBeenCalledTimes(1);
    expect(onSecondaryRateLimit.mock.calls[0][0]).toBe(1);
  });

  it('surfaces a secondary rate limit as a 403 RequestError with Retry-After when the handler defers', async () => {
    fake.switches.rateLimitNext(1, 90);
    const error = (await github.repos.get({ owner: ORG, repo: 'hello-world' }).catch((e: unknown) => e)) as RequestError;
    expect(error).toBeInstanceOf(RequestError);
    expect(error.status).toBe(403);
    expect(error.response?.headers['retry-after']).toBe('90');
    expect(onSecondaryRateLimit.mock.calls[0][0]).toBe(90);
  });

  it('reports an exhausted quota to onRateLimit with the wait until x-ratelimit-reset', async () => {
    fake.rateLimitStyle = 'primary';
    fake.switches.rateLimitNext(1, 600);
    const error = (await github.repos.get({ owner: ORG, repo: 'hello-world' }).catch((e: unknown) => e)) as RequestError;
    expect(error.status).toBe(403);
    expect(error.response?.headers['x-ratelimit-remaining']).toBe('0');
    expect(onRateLimit).toHaveBeenCalledTimes(1);
    expect(onRateLimit.mock.calls[0][0]).toBeGreaterThanOrEqual(600);
    expect(onRateLimit.mock.calls[0][0]).toBeLessThanOrEqual(602);
  });

  it('names a given reset instant in x-ratelimit-reset, whatever the Retry-After', async () => {
    fake.rateLimitStyle = 'primary';
    fake.rateLimitResetAt = new Date('2031-01-01T01:10:00Z');
    fake.switches.rateLimitNext(1, 60);
    const error = (await github.repos.get({ owner: ORG, repo: 'hello-world' }).catch((e: unknown) => e)) as RequestError;
    expect(error.response?.headers['x-ratelimit-reset']).toBe(String(Date.parse('2031-01-01T01:10:00Z') / 1000));
  });

  it('refuses a token as revoked until it is accepted again', async () => {
    fake.refuseToken(fake.token);
    const error = (await github.repos.get({ owner: ORG, repo: 'hello-world' }).catch((e: unknown) => e)) as RequestError;
    expect([error.status, error.message]).toEqual([401, 'Bad credentials - https://docs.github.com/rest']);
    fake.acceptToken(fake.token);
    expect((await github.repos.get({ owner: ORG, repo: 'hello-world' })).status).toBe(200);
  });

  it('does not route a 429 secondary limit to the throttling handler: the retry plugin retries it on its own backoff', async () => {
    fake.rateLimitStyle = 'secondary-429';
    fake.switches.rateLimitNext(1, 90);
    const repo = await github.repos.get({ owner: ORG, repo: 'hello-world' });
    expect(repo.data.name).toBe('hello-world');
    expect(onSecondaryRateLimit).not.toHaveBeenCalled();
    expect(fake.switches.requests).toHaveLength(2);
  });

  it('retries a burst of 5xx and then answers', async () => {
    fake.switches.failNext(2, 502);
    const repo = await github.repos.get({ owner: ORG, repo: 'hello-world' });
    expect(repo.data.default_branch).toBe('master');
    expect(fake.switches.requests).toEqual(Array(3).fill(`GET /repos/${ORG}/hello-world`));
  });

  it('fails with 401 Bad credentials, unretried, when the token is revoked mid-sync', async () => {
    fake.switches.afterRequests(2, () => fake.switches.revokeToken(fake.token));
    const seen: number[] = [];
    const error = (await (async () => {
      for await (const page of github.paginate.iterator(github.issues.listForRepo, { owner: ORG, repo: 'paginate-issues', per_page: 3 })) seen.push(...page.data.map((i) => i.number));
    })().catch((e: unknown) => e)) as RequestError;
    expect(seen).toEqual([13, 12, 11, 10, 9, 8]);
    expect(error.status).toBe(401);
    expect(error.message).toContain('Bad credentials');
    expect(fake.switches.requests).toHaveLength(3);
  });
});
