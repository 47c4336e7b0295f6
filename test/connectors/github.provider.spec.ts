import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { callerPrincipals, isVisible } from '@crs/domain/acl';
import { effectiveAccess } from '@crs/domain/connectors/access-precedence';
import { AuthError, ConfigurationError, RateLimitedError, ScopeError, TargetForbiddenError, TransientError } from '@crs/connectors/provider-errors';
import type { ExistingDocument, ResourceConfig, SyncEvent } from '@crs/connectors/provider.port';
import { GitHubOctokit } from '@crs/connectors/providers/github/github-client';
import { GitHubFetchError, githubFetch } from '@crs/connectors/providers/github/github-fetch';
import { publicOnlyAgents } from '@crs/network/public-agents';
import { GitHubProvider, type GitHubProviderOptions } from '@crs/connectors/providers/github/github.provider';
import type { RunningFake } from '../fakes/loopback-server';
import { GitHubFake, type GitHubCollaborator } from '../fakes/github/github-fake';

/**
 * The GitHub provider against the GitHub fake on 127.0.0.1, with the real Octokit client: what a sync reads and in
 * which pages, the cursor, the calls of an unchanged sync, throttling, server errors, a revoked token, edits during a
 * crawl, back-dated issues, deletions, the limits on responses, time and pages, the permission capture (with a
 * fast-check property), and the rules for Enterprise URLs: https only, public addresses only, no redirect elsewhere.
 */
const ORG = 'octokit-fixture-org';
const HELLO = `${ORG}/hello-world`;
const ISSUES = `${ORG}/paginate-issues`;

describe('GitHub provider against the GitHub fake', () => {
  let fake: GitHubFake;
  let server: RunningFake;
  const provider = (options: GitHubProviderOptions = {}) => new GitHubProvider({ apiUrl: server.url, allowPrivateNetworks: true, retryBaseMs: 5, shortWaitSeconds: 1, ...options });
  const ctx = () => ({ credentials: { token: fake.token } });
  const repo = (resourceId: string, options?: Record<string, unknown>): ResourceConfig => ({ resourceId, resourceType: 'repository', name: resourceId, ...(options ? { options } : {}) });

  async function run(p: GitHubProvider, resource: ResourceConfig, cursor: string | null): Promise<{ events: SyncEvent[]; cursor: string | null }> {
    const events: SyncEvent[] = [];
    let last = cursor;
    for await (const e of p.sync(ctx(), resource, cursor)) {
      events.push(e);
      if (e.kind === 'checkpoint') last = e.cursor;
    }
    return { events, cursor: last };
  }
  /** What a sync yielded, compactly: `+id` upsert, `-id` delete, `!id` failure, `|` checkpoint. */
  const shape = (events: SyncEvent[]) => events.map((e) => (e.kind === 'upsert' ? `+${e.doc.id}` : e.kind === 'delete' ? `-${e.id}` : e.kind === 'failure' ? `!${e.id}` : e.kind === 'checkpoint' ? '|' : `~${e.id}`));
  const upserted = (events: SyncEvent[]) => events.flatMap((e) => (e.kind === 'upsert' ? [e.doc] : []));
  async function list(p: GitHubProvider, resource: ResourceConfig): Promise<ExistingDocument[]> {
    const out: ExistingDocument[] = [];
    for await (const d of p.listExistingIds(ctx(), resource)) out.push(d);
    return out;
  }
  /** The requests answered since `from`, decoded, without the origin. */
  const requestsSince = (from: number) => fake.switches.requests.slice(from).map(decodeURIComponent);
  const caught = async (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => e);

  beforeEach(async () => {
    fake = new GitHubFake();
    fake.loadOctokitFixtures();
    server = await fake.start();
  });
  afterEach(() => fake.stop());

  describe('credentials and discovery', () => {
    it('validates a token and names the account; a wrong one is an AuthError that says what to change', async () => {
      const identity = await provider().validateCredentials(ctx());
      // the operator's API URL (here the fake) stands for github.com
      expect(identity).toEqual({ accountScope: 'github.com/crs-connector', displayName: 'crs-connector on github.com', warnings: [] });
      const err = await caught(provider().validateCredentials({ credentials: { token: 'ghp_wrong' } }));
      expect(err).toBeInstanceOf(AuthError);
      expect((err as Error).message).toBe("github.com refused the token (Bad credentials): it is wrong, expired or revoked. Create a new token and update the connector's credentials.");
      expect(await caught(provider().validateCredentials({ credentials: {} }))).toBeInstanceOf(ConfigurationError);
    });

    it('discovers the repositories the token reaches, with their visibility', async () => {
      fake.setVisibility(ISSUES, 'private');
      const found = await provider().discoverResources(ctx());
      expect(found.map((r) => [r.resourceId, r.resourceType, r.details.visibility, r.details.default_branch])).toEqual([
        [HELLO, 'repository', 'public', 'master'],
        [ISSUES, 'repository', 'private', 'master'],
      ]);
    });

    it('refuses a resource id that is not owner/name', async () => {
      expect(await caught(provider().capturePermissions(ctx(), repo('not a repo')))).toBeInstanceOf(ConfigurationError);
    });
  });

  describe('files and issues', () => {
    beforeEach(() => {
      fake.writeFile(HELLO, 'docs/guide.md', '# Guide\nHow to start.\n');
      fake.writeFile(HELLO, 'docs/deep/notes.txt', 'Plain notes.\n');
      fake.writeFile(HELLO, 'docs/logo.png', 'not text by extension');
      fake.writeFile(HELLO, 'src/index.md', 'outside the default paths');
      fake.addIssue(HELLO, { number: 1, title: 'Crash on start', body: 'It crashes.', created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T00:00:00Z', labels: [{ id: 1, node_id: 'L1', url: '', name: 'bug', color: 'f00', default: true, description: null }] });
      fake.addComment(HELLO, 1, { body: 'Seen it too.', created_at: '2024-01-02T00:00:00Z' });
      fake.addIssue(HELLO, { number: 2, title: 'Fix the crash', body: 'Fixes #1.', created_at: '2024-01-03T00:00:00Z', updated_at: '2024-01-03T00:00:00Z', pull_request: { url: `https://api.github.com/repos/${HELLO}/pulls/2`, html_url: null, diff_url: null, patch_url: null } });
    });

    it('a first sync reads the README, the docs/ text files, the issues with their comments and the pull requests', async () => {
      const { events } = await run(provider(), repo(HELLO, { page_size: 2 }), null);
      expect(shape(events)).toEqual(['+README.md', '+docs/deep/notes.txt', '|', '+docs/guide.md', '+#1', '+#2', '|']);
      const [readme, notes, , issue, pull] = upserted(events);
      expect(readme).toMatchObject({ title: `${HELLO}: README.md`, content: { kind: 'text', text: '# hello-world' }, updatedAt: null, filterableFields: { repository: HELLO, type: 'file', path: 'README.md', author: null, labels: null, state: null } });
      expect(notes.metadata).toMatchObject({ url: `https://github.com/${HELLO}/blob/master/docs/deep/notes.txt` });
      expect(issue).toMatchObject({ title: 'Crash on start', updatedAt: '2024-01-02T00:00:00.000Z', filterableFields: { type: 'issue', labels: 'bug', state: 'open', author: 'octokit-fixture-user-a' } });
      expect(issue.content).toEqual({ kind: 'text', text: 'Crash on start\n#1 · issue · open · opened by octokit-fixture-user-a · labels: bug\n\nIt crashes.\n\n---\noctokit-fixture-user-a commented on 2024-01-02T00:00:00Z:\n\nSeen it too.\n' });
      expect(pull.filterableFields).toMatchObject({ type: 'pull_request' });
      // the listing gives the same ids and hashes a sync gives
      expect(await list(provider(), repo(HELLO))).toEqual(upserted(events).map((d) => ({ id: d.id, contentHash: d.contentHash })));
    });

    it('an unchanged sync reads no file and asks only for the repository, the head and the issues since the last sync', async () => {
      const p = provider();
      const first = await run(p, repo(HELLO), null);
      const from = fake.switches.requests.length;
      await p.capturePermissions(ctx(), repo(HELLO));
      await list(p, repo(HELLO));
      const second = await run(p, repo(HELLO), first.cursor);
      expect(shape(second.events)).toEqual(['|']);
      const since = new Date(Date.parse(JSON.parse(first.cursor!).issues.since) - 5 * 60_000).toISOString();
      expect(requestsSince(from)).toEqual([
        `GET /repos/${HELLO}`,
        `GET /repos/${HELLO}`,
        `GET /repos/${HELLO}/git/trees/master?recursive=true`,
        `GET /repos/${HELLO}/issues?state=all&per_page=100&page=1&sort=created&direction=asc`,
        `GET /repos/${HELLO}`,
        `GET /repos/${HELLO}/git/ref/heads/master`,
        `GET /repos/${HELLO}/issues?state=all&per_page=100&page=1&sort=created&direction=asc&since=${since}`,
      ]);
    });

    it('the capture, the listing and the crawl of one sync share one context and read the repository once; the next sync reads it again', async () => {
      const p = provider();
      const first = await run(p, repo(HELLO), null);
      for (let sync = 0; sync < 2; sync++) {
        const one = ctx();
        const from = fake.switches.requests.length;
        await p.capturePermissions(one, repo(HELLO));
        for await (const d of p.listExistingIds(one, repo(HELLO))) void d;
        for await (const e of p.sync(one, repo(HELLO), first.cursor)) void e;
        for await (const e of p.fetchDocuments(one, repo(HELLO), ['docs/guide.md'])) void e;
        expect(requestsSince(from).filter((r) => r === `GET /repos/${HELLO}`)).toHaveLength(1);
      }
    });

    it('a failed read of the repository is not kept: the next call of the same sync reads it again', async () => {
      const p = provider({ serverErrorRetries: 0 });
      const one = ctx();
      fake.switches.failNext(1, 502);
      expect(await caught(p.capturePermissions(one, repo(HELLO)))).toBeInstanceOf(TransientError);
      expect(await p.capturePermissions(one, repo(HELLO))).toEqual({ status: 'captured', acl: ['__public__'] });
      expect(fake.switches.requests).toEqual([`GET /repos/${HELLO}`, `GET /repos/${HELLO}`]);
    });

    it('a moved head reads only the files whose blob changed, by comparing the two trees', async () => {
      const p = provider();
      const first = await run(p, repo(HELLO, { include_issues: false, include_pull_requests: false }), null);
      const base = fake.headSha(HELLO);
      fake.writeFile(HELLO, 'docs/guide.md', '# Guide\nHow to start, again.\n');
      fake.writeFile(HELLO, 'docs/new.md', 'A new page.\n');
      fake.writeFile(HELLO, 'docs/deep/notes.txt', null);
      const from = fake.switches.requests.length;
      const second = await run(p, repo(HELLO, { include_issues: false, include_pull_requests: false }), first.cursor);
      // a removed file is no event of the crawl: the listing no longer has it, and pruning removes it
      expect(shape(second.events)).toEqual(['+docs/guide.md', '+docs/new.md', '|']);
      expect(upserted(second.events)[0].content).toEqual({ kind: 'text', text: '# Guide\nHow to start, again.\n' });
      const head = fake.headSha(HELLO);
      expect(requestsSince(from).map((r) => r.replace(/blobs\/[0-9a-f]{40}/, 'blobs/<sha>'))).toEqual([
        `GET /repos/${HELLO}`,
        `GET /repos/${HELLO}/git/ref/heads/master`,
        `GET /repos/${HELLO}/git/trees/${head}?recursive=true`,
        `GET /repos/${HELLO}/git/trees/${base}?recursive=true`,
        `GET /repos/${HELLO}/git/blobs/<sha>`,
        `GET /repos/${HELLO}/git/blobs/<sha>`,
      ]);
      expect((await list(p, repo(HELLO, { include_issues: false, include_pull_requests: false }))).map((d) => d.id)).toEqual(['README.md', 'docs/guide.md', 'docs/new.md']);
      expect(JSON.parse(second.cursor!).files).toEqual({ commit: head });
    });

    it('when the last synced commit is gone (force-push, garbage collection), every selected file is read again', async () => {
      const p = provider();
      const resource = repo(HELLO, { include_issues: false, include_pull_requests: false });
      const first = await run(p, resource, null);
      const base = fake.headSha(HELLO);
      fake.writeFile(HELLO, 'docs/guide.md', '# Guide, rewritten\n');
      fake.forgetCommit(HELLO, base);
      expect(shape((await run(p, resource, first.cursor)).events)).toEqual(['+README.md', '+docs/deep/notes.txt', '+docs/guide.md', '|']);
    });

    it('paths choose the files; a file over the size limit is a failure and is not listed; bytes that are not UTF-8 are a failure', async () => {
      fake.writeFile(HELLO, 'docs/big.md', 'x'.repeat(2000));
      fake.writeFile(HELLO, 'docs/latin1.txt', String.fromCharCode(0xe9));
      const p = provider({ maxDocumentBytes: 1000 });
      const resource = repo(HELLO, { paths: ['docs/**', 'src/*.md'], include_issues: false, include_pull_requests: false });
      const { events } = await run(p, resource, null);
      expect(shape(events)).toEqual(['!docs/big.md', '+docs/deep/notes.txt', '+docs/guide.md', '+docs/latin1.txt', '+src/index.md', '|']);
      expect((await list(p, resource)).map((d) => d.id)).toEqual(['docs/deep/notes.txt', 'docs/guide.md', 'docs/latin1.txt', 'src/index.md']);
      expect(await caught(run(p, repo(HELLO, { paths: 'docs' }), null))).toBeInstanceOf(ConfigurationError);
    });

    it('an issue\'s comments are read only until their text passes the document limit; the note counts every comment left out', async () => {
      fake.switches.maxPageSize = 2;
      for (let i = 0; i < 10; i++) fake.addComment(HELLO, 1, { body: `${i}`.repeat(300), created_at: `2024-02-${10 + i}T00:00:00Z` });
      const from = fake.switches.requests.length;
      const { events } = await run(provider({ maxDocumentBytes: 1000 }), repo(HELLO, { paths: [], include_pull_requests: false }), null);
      expect(requestsSince(from).filter((r) => r.includes('/comments'))).toEqual([
        `GET /repos/${HELLO}/issues/1/comments?per_page=100`,
        `GET /repos/${HELLO}/issues/1/comments?per_page=2&page=2`,
        `GET /repos/${HELLO}/issues/1/comments?per_page=2&page=3`,
      ]);
      const text = (upserted(events)[0].content as { text: string }).text;
      // 11 comments, 5 read, 3 within the limit
      expect(text.endsWith(`\n\n${'1'.repeat(300)}\n\n[8 later comments not included: the document reached its size limit]\n`)).toBe(true);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1000);
    });

    it('a deleted issue is missing from the listing, and fetching it gives a delete', async () => {
      const p = provider();
      fake.deleteIssue(HELLO, 1);
      expect((await list(p, repo(HELLO))).map((d) => d.id)).toEqual(['README.md', 'docs/deep/notes.txt', 'docs/guide.md', '#2']);
      const fetched: SyncEvent[] = [];
      for await (const e of p.fetchDocuments(ctx(), repo(HELLO), ['#1', '#2', 'docs/guide.md', 'docs/gone.md'])) fetched.push(e);
      expect(shape(fetched)).toEqual(['+docs/guide.md', '-docs/gone.md', '-#1', '+#2']);
    });

    it('pull requests and issues can each be left out; then they are neither synced nor listed', async () => {
      const p = provider();
      const onlyIssues = repo(HELLO, { paths: [], include_pull_requests: false });
      expect(shape((await run(p, onlyIssues, null)).events)).toEqual(['+#1', '|']);
      expect((await list(p, onlyIssues)).map((d) => d.id)).toEqual(['#1']);
      const fetched: SyncEvent[] = [];
      for await (const e of p.fetchDocuments(ctx(), onlyIssues, ['#2'])) fetched.push(e);
      expect(shape(fetched)).toEqual(['-#2']);
    });
  });

  /** The recorded issues say they have comments that the recording does not hold: here they have none, so a test counts only the listing's calls. */
  const withoutComments = () => {
    for (let n = 1; n <= 13; n++) fake.editIssue(ISSUES, n, { comments: 0 });
  };

  describe('issues: pages, the cursor, edits during a crawl, back-dated timestamps', () => {
    const issuesOnly = (pageSize: number) => repo(ISSUES, { paths: [], page_size: pageSize });
    beforeEach(withoutComments);

    it('pages through the issues oldest first with a checkpoint after each page, and resumes from any checkpoint', async () => {
      const p = provider();
      const { events } = await run(p, issuesOnly(5), null);
      expect(shape(events)).toEqual(['+#1', '+#2', '+#3', '+#4', '+#5', '|', '+#6', '+#7', '+#8', '+#9', '+#10', '|', '+#11', '+#12', '+#13', '|']);
      const second = events.filter((e) => e.kind === 'checkpoint')[1] as Extract<SyncEvent, { kind: 'checkpoint' }>;
      expect(shape((await run(p, issuesOnly(5), second.cursor)).events)).toEqual(['+#11', '+#12', '+#13', '|']);
    });

    it('an issue edited while the pages are read is read again by the next sync; one opened meanwhile is read by this one', async () => {
      const p = provider();
      fake.switches.afterRequests(3, () => {
        fake.editIssue(ISSUES, 2, { title: 'Test issue 2, edited mid-crawl', updated_at: new Date().toISOString() });
        fake.addIssue(ISSUES, { number: 14, title: 'Opened mid-crawl', created_at: new Date().toISOString(), updated_at: new Date().toISOString() });
      });
      const first = await run(p, issuesOnly(5), null);
      expect(shape(first.events)).toEqual(['+#1', '+#2', '+#3', '+#4', '+#5', '|', '+#6', '+#7', '+#8', '+#9', '+#10', '|', '+#11', '+#12', '+#13', '+#14', '|']);
      expect(upserted(first.events)[1].title).toBe('Test issue 2');
      const second = await run(p, issuesOnly(5), first.cursor);
      expect(shape(second.events)).toEqual(['+#2', '+#14', '|']);
      expect(upserted(second.events)[0].title).toBe('Test issue 2, edited mid-crawl');
    });

    it('a back-dated edit escapes the since window; the listing shows a new hash and fetching reads the new version', async () => {
      const p = provider();
      const first = await run(p, issuesOnly(100), null);
      const held = new Map(upserted(first.events).map((d) => [d.id, d.contentHash]));
      fake.editIssue(ISSUES, 3, { title: 'Imported with an old date', updated_at: '2017-10-10T15:00:00Z' });
      const second = await run(p, issuesOnly(100), first.cursor);
      expect(shape(second.events)).toEqual(['|']);
      const changed = (await list(p, issuesOnly(100))).filter((d) => held.get(d.id) !== d.contentHash).map((d) => d.id);
      expect(changed).toEqual(['#3']);
      const fetched: SyncEvent[] = [];
      for await (const e of p.fetchDocuments(ctx(), issuesOnly(100), changed)) fetched.push(e);
      expect(upserted(fetched).map((d) => [d.id, d.title, d.updatedAt])).toEqual([['#3', 'Imported with an old date', '2017-10-10T15:00:00.000Z']]);
    });

    it('a cursor written under other settings, or unreadable, starts over', async () => {
      const p = provider();
      const first = await run(p, issuesOnly(100), null);
      expect(shape((await run(p, repo(ISSUES, { paths: [], include_pull_requests: false }), first.cursor)).events)).toHaveLength(14);
      expect(shape((await run(p, issuesOnly(100), 'not json')).events)).toHaveLength(14);
    });
  });

  describe('throttling, server errors and a revoked token', () => {
    const issuesOnly = repo(ISSUES, { paths: [], page_size: 5 });
    beforeEach(withoutComments);

    it('a 429 with Retry-After stops the sync with a RateLimitedError at that time; the checkpoint before it holds', async () => {
      fake.rateLimitStyle = 'secondary-429';
      const p = provider();
      const seen: SyncEvent[] = [];
      // the repository and the first page answer; the second page is throttled
      fake.switches.afterRequests(2, () => fake.switches.rateLimitNext(1, 90));
      const before = Date.now();
      const err = await caught((async () => {
        for await (const e of p.sync(ctx(), issuesOnly, null)) seen.push(e);
      })());
      expect(err).toBeInstanceOf(RateLimitedError);
      const retryAt = (err as RateLimitedError).retryAt.getTime();
      expect(retryAt).toBeGreaterThanOrEqual(before + 90_000);
      expect(retryAt).toBeLessThanOrEqual(Date.now() + 90_000);
      expect(shape(seen)).toEqual(['+#1', '+#2', '+#3', '+#4', '+#5', '|']);
      expect(fake.switches.requests).toHaveLength(3);
    });

    it('an exhausted quota (403, x-ratelimit-remaining 0) defers to x-ratelimit-reset; a secondary 403 to its Retry-After', async () => {
      fake.rateLimitStyle = 'primary';
      fake.rateLimitResetAt = new Date('2031-01-01T01:10:00Z');
      fake.switches.rateLimitNext(1, 600);
      const primary = await caught(provider().capturePermissions(ctx(), repo(HELLO)));
      expect(primary).toBeInstanceOf(RateLimitedError);
      expect((primary as RateLimitedError).retryAt.toISOString()).toBe('2031-01-01T01:10:00.000Z');

      fake.rateLimitStyle = 'secondary-403';
      fake.rateLimitResetAt = undefined;
      fake.switches.rateLimitNext(1, 120);
      const before = Date.now();
      const secondary = (await caught(provider().capturePermissions(ctx(), repo(HELLO)))) as RateLimitedError;
      expect(secondary).toBeInstanceOf(RateLimitedError);
      expect(secondary.retryAt.getTime() - before).toBeGreaterThanOrEqual(120_000);
      expect(secondary.retryAt.getTime() - Date.now()).toBeLessThanOrEqual(120_000);
      expect(secondary.message).not.toContain(fake.token);
    });

    it('a wait within shortWaitSeconds is slept through by the client', async () => {
      fake.switches.rateLimitNext(1, 1);
      expect(await provider().capturePermissions(ctx(), repo(HELLO))).toEqual({ status: 'captured', acl: ['__public__'] });
      expect(fake.switches.requests).toEqual([`GET /repos/${HELLO}`, `GET /repos/${HELLO}`]);
    });

    it('a short 5xx burst is retried; a longer one is a TransientError', async () => {
      fake.switches.failNext(2, 502);
      expect(shape((await run(provider(), issuesOnly, null)).events)).toHaveLength(16);
      fake.switches.failNext(3, 503);
      const err = await caught(run(provider(), issuesOnly, null));
      expect(err).toBeInstanceOf(TransientError);
      expect((err as Error).message).toContain('HTTP 503');
    });

    it('a token revoked mid-sync is an AuthError; the sync resumes from the last checkpoint once a token works', async () => {
      const p = provider();
      const seen: SyncEvent[] = [];
      fake.switches.afterRequests(2, () => fake.refuseToken(fake.token));
      const err = await caught((async () => {
        for await (const e of p.sync(ctx(), issuesOnly, null)) seen.push(e);
      })());
      expect(err).toBeInstanceOf(AuthError);
      expect((err as Error).message).toContain('Create a new token');
      expect(shape(seen)).toEqual(['+#1', '+#2', '+#3', '+#4', '+#5', '|']);
      fake.acceptToken(fake.token);
      const last = seen[seen.length - 1] as Extract<SyncEvent, { kind: 'checkpoint' }>;
      expect(shape((await run(p, issuesOnly, last.cursor)).events)).toEqual(['+#6', '+#7', '+#8', '+#9', '+#10', '|', '+#11', '+#12', '+#13', '|']);
    });

    it('an abort stops the sync with the signal\'s reason', async () => {
      const controller = new AbortController();
      const reason = new Error('stopping');
      const seen: SyncEvent[] = [];
      const err = await caught((async () => {
        for await (const e of provider().sync({ credentials: { token: fake.token }, signal: controller.signal }, issuesOnly, null)) {
          seen.push(e);
          if (e.kind === 'checkpoint') controller.abort(reason);
        }
      })());
      expect(err).toBe(reason);
      expect(shape(seen)).toEqual(['+#1', '+#2', '+#3', '+#4', '+#5', '|']);
    });
  });

  describe('limits: response bytes, time, pages', () => {
    const issuesOnly = (pageSize: number) => repo(ISSUES, { paths: [], page_size: pageSize });
    beforeEach(withoutComments);

    it('a response over maxResponseBytes is a ConfigurationError naming the limit, and is not retried', async () => {
      const err = await caught(provider({ maxResponseBytes: 1024 }).capturePermissions(ctx(), repo(HELLO)));
      expect(err).toBeInstanceOf(ConfigurationError);
      expect((err as Error).message).toBe(`github.com answered with more than 1024 bytes while reading the repository ${HELLO}; the connector reads at most that much of one response.`);
      expect(fake.switches.requests).toEqual([`GET /repos/${HELLO}`]);
    });

    it('a blob over the document limit is a failure even when the tree says it is small, read or cut off', async () => {
      fake.writeFile(HELLO, 'docs/a-small-by-the-tree.md', 'x'.repeat(5000));
      fake.writeFile(HELLO, 'docs/b-huge.md', 'y'.repeat(200_000));
      fake.misreportSize(HELLO, 'docs/a-small-by-the-tree.md', 10);
      fake.misreportSize(HELLO, 'docs/b-huge.md', 10);
      const { events } = await run(provider({ maxDocumentBytes: 1000 }), repo(HELLO, { paths: ['docs/**'], include_issues: false, include_pull_requests: false }), null);
      expect(events.map((e) => (e.kind === 'failure' ? `${e.id}: ${e.error.message}` : e.kind))).toEqual([
        'docs/a-small-by-the-tree.md: docs/a-small-by-the-tree.md is 5000 bytes, over the 1000-byte limit for a document; it is not synced.',
        'docs/b-huge.md: docs/b-huge.md is larger than the 1000-byte limit for a document; it is not synced.',
        'checkpoint',
      ]);
    });

    it('a response that stalls past requestTimeoutMs is a TransientError at the deadline, not a wait without end', async () => {
      fake.stallNext();
      const before = Date.now();
      const err = await caught(provider({ requestTimeoutMs: 300 }).capturePermissions(ctx(), repo(HELLO)));
      expect(err).toBeInstanceOf(TransientError);
      expect((err as Error).message).toBe(`github.com did not answer within 300 ms while reading the repository ${HELLO}; it will be retried.`);
      expect(Date.now() - before).toBeLessThan(3000);
    }, 10_000);

    it('a listing whose next page is the page just read stops with an error saying so, in every paged call', async () => {
      fake.endlessPages = true;
      fake.setVisibility(HELLO, 'private');
      for (const c of fake.recordedCollaborators) fake.addCollaborator(HELLO, c);
      const p = provider();
      const failures = [
        await caught(run(p, issuesOnly(5), null)),
        await caught(list(p, issuesOnly(5))),
        await caught(p.discoverResources(ctx())),
        await caught(p.capturePermissions(ctx(), repo(HELLO))),
      ];
      fake.addComment(ISSUES, 1, { body: 'a comment', created_at: '2024-01-01T00:00:00Z' });
      failures.push(await caught(p.fetchDocuments(ctx(), issuesOnly(5), ['#1'])[Symbol.asyncIterator]().next()));
      const messages = failures.map((e) => [e instanceof TransientError, (e as Error).message]);
      expect(messages).toEqual([
        [true, `github.com gave a page already read as the next page of the issues of ${ISSUES}; the listing was stopped there.`],
        [true, `github.com gave a page already read as the next page of the issues of ${ISSUES}; the listing was stopped there.`],
        [true, 'github.com gave a page already read as the next page of the repositories of the token; the listing was stopped there.'],
        [true, `github.com gave a page already read as the next page of the collaborators of ${HELLO}; the listing was stopped there.`],
        [true, `github.com gave a page already read as the next page of the comments of #1 in ${ISSUES}; the listing was stopped there.`],
      ]);
    }, 20_000);

    it('a listing longer than maxPages stops with a ConfigurationError saying so', async () => {
      const err = await caught(run(provider({ maxPages: 4 }), issuesOnly(3), null));
      expect(err).toBeInstanceOf(ConfigurationError);
      expect((err as Error).message).toBe(`The issues of ${ISSUES} run past 4 pages, the most the connector reads of one listing; the listing was stopped there.`);
      expect(fake.switches.requests.filter((r) => r.includes('/issues?'))).toHaveLength(4);
    }, 20_000);
  });

  describe('permission capture (rule 11)', () => {
    const [userA, userB] = ['octokit-fixture-user-a', 'octokit-fixture-user-b'];
    const collaborator = (login: string, id: number): GitHubCollaborator => ({ ...fake.recordedCollaborators[0], login, id, role_name: 'read' });

    it('public: __public__; private: the collaborators\' public emails; one hidden email: no list, the count of unresolved collaborators', async () => {
      const p = provider();
      expect(await p.capturePermissions(ctx(), repo(HELLO))).toEqual({ status: 'captured', acl: ['__public__'] });
      fake.setVisibility(HELLO, 'private');
      for (const c of fake.recordedCollaborators) fake.addCollaborator(HELLO, c);
      fake.setPublicEmail(userA, 'Ada@Example.com');
      fake.setPublicEmail(userB, 'bob@example.com');
      expect(await p.capturePermissions(ctx(), repo(HELLO))).toEqual({ status: 'captured', acl: ['user_email:ada@example.com', 'user_email:bob@example.com'] });
      fake.setPublicEmail(userB, null);
      expect(await p.inspectPermissions(ctx(), repo(HELLO))).toEqual({ visibility: 'private', collaborators: 2, unresolved: [userB], verdict: { status: 'captured', acl: null, unresolved: 1 } });
      expect(await p.capturePermissions(ctx(), repo(HELLO))).toEqual({ status: 'captured', acl: null, unresolved: 1 });
      fake.removeCollaborator(HELLO, userB);
      expect(await p.capturePermissions(ctx(), repo(HELLO))).toEqual({ status: 'captured', acl: ['user_email:ada@example.com'] });
    });

    it('internal (every member of the enterprise reads it, the public does not): restricted, with members it cannot name', async () => {
      const p = provider();
      fake.setVisibility(HELLO, 'internal');
      for (const c of fake.recordedCollaborators) fake.addCollaborator(HELLO, c);
      fake.setPublicEmail(userA, 'ada@example.com');
      fake.setPublicEmail(userB, 'bob@example.com');
      expect(await p.inspectPermissions(ctx(), repo(HELLO))).toEqual({ visibility: 'internal', collaborators: 0, unresolved: [], verdict: { status: 'captured', acl: null, unresolved: 1 } });
      // the verdict is neither public nor the collaborators: with no API rule nobody retrieves it, with one the rule decides
      const verdict = await p.capturePermissions(ctx(), repo(HELLO));
      expect(isVisible(effectiveAccess({ document: { status: 'off' }, resource: verdict, apiRule: undefined }).acl, callerPrincipals(['ada@example.com']))).toBe(false);
      expect(isVisible(effectiveAccess({ document: { status: 'off' }, resource: verdict, apiRule: ['user_email:ada@example.com'] }).acl, callerPrincipals(['ada@example.com']))).toBe(true);
    });

    it('more than 1,000 collaborators is the repository\'s group principal, read without looking up any profile', async () => {
      fake.setVisibility(HELLO, 'private');
      for (let i = 0; i < 1001; i++) fake.addCollaborator(HELLO, collaborator(`member-${i}`, 100 + i));
      expect(await provider().capturePermissions(ctx(), repo(HELLO))).toEqual({ status: 'captured', acl: [`group:github:${HELLO}`] });
      expect(fake.switches.requests.filter((r) => r.startsWith('GET /users/'))).toEqual([]);
      expect(fake.switches.requests.filter((r) => r.includes('/collaborators'))).toHaveLength(11);
    });

    it('a token that may not list collaborators fails the capture with a ScopeError that says what is needed', async () => {
      fake.setVisibility(HELLO, 'private');
      fake.hideCollaborators(HELLO);
      const err = await caught(provider().capturePermissions(ctx(), repo(HELLO)));
      expect(err).toBeInstanceOf(ScopeError);
      expect((err as Error).message).toContain('push access');
    });

    it('property: what a caller retrieves is what it can read at GitHub, under rule 12 against an API rule', async () => {
      const p = provider();
      const logins = ['u0', 'u1', 'u2', 'u3'];
      logins.forEach((login, i) => fake.addUser({ ...fake.recordedCollaborators[0], login, id: 500 + i }, null));
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            visibility: fc.constantFrom<'public' | 'private' | 'internal'>('public', 'private', 'internal'),
            members: fc.subarray(logins),
            hidden: fc.subarray(logins),
            apiRule: fc.option(fc.subarray(logins.map((l) => `user_email:${l}@example.com`)), { nil: undefined }),
          }),
          async ({ visibility, members, hidden, apiRule }) => {
            fake.setVisibility(HELLO, visibility);
            for (const login of logins) {
              fake.removeCollaborator(HELLO, login);
              fake.setPublicEmail(login, hidden.includes(login) ? null : `${login}@example.com`);
            }
            for (const login of members) fake.addCollaborator(HELLO, collaborator(login, 500 + logins.indexOf(login)));
            const verdict = await p.capturePermissions(ctx(), repo(HELLO));
            const access = effectiveAccess({ document: { status: 'off' }, resource: verdict, apiRule });
            const resolved = members.every((m) => !hidden.includes(m));
            for (const login of [...logins, 'outsider']) {
              const caller = callerPrincipals([`${login}@example.com`]);
              const retrieves = isVisible(access.acl, caller);
              const apiAllows = apiRule === undefined ? true : apiRule.includes(`user_email:${login}@example.com`);
              // Public at GitHub: everyone reads it, unless an API rule narrows it (a public verdict does not override
              // one). Private with every collaborator resolved: exactly the collaborators. Private with one hidden
              // email, or internal (every enterprise member reads it, and they cannot be named): the API rule decides,
              // and with none nobody reads it (the repository is known not to be open).
              const expected = visibility === 'public' ? apiAllows : visibility === 'private' && resolved ? members.includes(login) : apiRule !== undefined && apiAllows;
              expect({ visibility, members, hidden, apiRule, login, retrieves }).toEqual({ visibility, members, hidden, apiRule, login, retrieves: expected });
            }
          },
        ),
        { numRuns: 60 },
      );
    });
  });

  describe('GitHub Enterprise base_url: https, public addresses, no redirect elsewhere', () => {
    /** A name that is public when checked before the first call and loopback when a socket connects (DNS rebinding). */
    const rebinding = () => {
      let calls = 0;
      return async () => (calls++ === 0 ? [{ address: '140.82.112.6', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    };

    it('refuses a base_url on a loopback or private address before any call, unless private networks are allowed', async () => {
      const strict = provider({ allowPrivateNetworks: false });
      const err = await caught(strict.validateCredentials({ credentials: { token: fake.token, base_url: server.url } }));
      expect(err).toBeInstanceOf(TargetForbiddenError);
      expect((err as Error).message).toBe('base_url uses http://; credentials may only be sent over https://.');
      const secure = await caught(strict.validateCredentials({ credentials: { token: fake.token, base_url: server.url.replace('http:', 'https:') } }));
      expect(secure).toBeInstanceOf(TargetForbiddenError);
      expect((secure as Error).message).toBe("base_url leads to 127.0.0.1, which is not on the public internet (127.0.0.1 is a private, loopback, link-local or reserved address); connectors may not connect to this service's own network.");
      expect((await provider().validateCredentials({ credentials: { token: fake.token, base_url: server.url } })).accountScope).toBe(`${new URL(server.url).host}/crs-connector`);
      expect(await caught(strict.validateCredentials({ credentials: { token: fake.token, base_url: 'file:///etc/passwd' } }))).toBeInstanceOf(ConfigurationError);
      expect(fake.switches.requests).toEqual(['GET /user']);
    });

    it('refuses an http:// base_url on a public host before any call: the token would cross the network in clear', async () => {
      const strict = provider({ allowPrivateNetworks: false, lookup: rebinding(), serverErrorRetries: 0 });
      const err = await caught(strict.validateCredentials({ credentials: { token: fake.token, base_url: `http://github.example.com:${new URL(server.url).port}/api/v3` } }));
      expect(err).toBeInstanceOf(TargetForbiddenError);
      expect((err as Error).message).toBe('base_url uses http://; credentials may only be sent over https://.');
      expect(fake.switches.requests).toEqual([]);
    });

    it('checks again when connecting: a name that resolves to a private address by then is refused', async () => {
      const strict = provider({ allowPrivateNetworks: false, lookup: rebinding(), serverErrorRetries: 0 });
      const err = await caught(strict.validateCredentials({ credentials: { token: fake.token, base_url: `https://ghe.example.test:${new URL(server.url).port}/api/v3` } }));
      expect(err).toBeInstanceOf(TargetForbiddenError);
      const port = new URL(server.url).port;
      expect((err as Error).message).toBe(`Connecting to ghe.example.test:${port} was refused while reading the account of the token: ghe.example.test resolves to 127.0.0.1, which is not a public address; connectors may not connect to this service's own network.`);
      expect(fake.switches.requests).toEqual([]);
    });

    it('follows a redirect within the same origin, with the token', async () => {
      fake.redirect(`/repos/${ORG}/old-name`, `/repos/${HELLO}`, 301);
      fake.redirect(`/repos/${ORG}/older-name`, `${server.url}/repos/${ORG}/old-name`, 307);
      expect(await provider().capturePermissions(ctx(), repo(`${ORG}/older-name`))).toEqual({ status: 'captured', acl: ['__public__'] });
      expect(fake.switches.requests).toEqual([`GET /repos/${ORG}/older-name`, `GET /repos/${ORG}/old-name`, `GET /repos/${HELLO}`]);
    });

    describe('a redirect to another origin', () => {
      let elsewhere: http.Server;
      let reached: { url: string; authorization: string | undefined }[];
      let port: number;
      beforeEach(async () => {
        reached = [];
        elsewhere = http.createServer((req, res) => {
          reached.push({ url: req.url ?? '', authorization: req.headers.authorization });
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ visibility: 'public', private: false, full_name: HELLO }));
        });
        elsewhere.listen(0, '127.0.0.1');
        await once(elsewhere, 'listening');
        port = (elsewhere.address() as AddressInfo).port;
      });
      afterEach(async () => {
        elsewhere.closeAllConnections();
        await new Promise((resolve) => elsewhere.close(resolve));
      });

      it('is a ConfigurationError naming where it pointed, and nothing is sent there', async () => {
        for (const location of [`http://localhost:${port}/latest/meta-data/iam`, `http://127.0.0.1:${port}/repos/${HELLO}`, `https://127.0.0.1:${new URL(server.url).port}/repos/${HELLO}`]) {
          fake.redirect(`/repos/${HELLO}`, location);
          const err = await caught(provider().capturePermissions(ctx(), repo(HELLO)));
          expect({ location, err: err instanceof ConfigurationError, message: (err as Error).message }).toEqual({
            location,
            err: true,
            message: `github.com redirected the request for the repository ${HELLO} to ${location}; the connector follows redirects only within ${server.url}, so the token goes nowhere else. Set base_url to the address the API answers on.`,
          });
        }
        expect(reached).toEqual([]);
        expect(fake.switches.requests).toEqual([`GET /repos/${HELLO}`, `GET /repos/${HELLO}`, `GET /repos/${HELLO}`]);
      });

      it('is refused after a redirect within the origin too', async () => {
        const enterprise = { credentials: { token: fake.token, base_url: `${server.url}/api/v3` } };
        fake.redirect(`/api/v3/repos/${ORG}/old-name`, `/api/v3/repos/${HELLO}`, 301);
        fake.redirect(`/api/v3/repos/${HELLO}`, `http://localhost:${port}/latest/meta-data`);
        const err = await caught(provider().capturePermissions(enterprise, repo(`${ORG}/old-name`)));
        expect(err).toBeInstanceOf(ConfigurationError);
        expect((err as Error).message).toBe(`${new URL(server.url).host} redirected the request for the repository ${ORG}/old-name to http://localhost:${port}/latest/meta-data; the connector follows redirects only within ${server.url}, so the token goes nowhere else. Set base_url to the address the API answers on.`);
        expect(fake.switches.requests).toEqual([`GET /api/v3/repos/${ORG}/old-name`, `GET /api/v3/repos/${HELLO}`]);
        expect(reached).toEqual([]);
      });
    });

    it('the fetch speaks HTTP as Octokit expects: JSON, Link paging, raw bodies, errors', async () => {
      const fetch = githubFetch({ httpAgent: new http.Agent(), httpsAgent: new https.Agent(), maxBytes: 1 << 20, timeoutMs: 5000 });
      const client = new GitHubOctokit({ auth: fake.token, baseUrl: server.url, request: { fetch }, throttle: { onRateLimit: () => false, onSecondaryRateLimit: () => false }, retry: { retryAfterBaseValue: 5 } });
      const issues = await client.paginate(client.issues.listForRepo, { owner: ORG, repo: 'paginate-issues', state: 'all', per_page: 5 });
      expect(issues.map((i) => i.number)).toEqual([13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
      const raw = await client.repos.getContent({ owner: ORG, repo: 'hello-world', path: 'README.md', mediaType: { format: 'raw' } });
      expect(raw.data).toBe('# hello-world');
      fake.refuseToken(fake.token);
      const err = (await caught(client.repos.get({ owner: ORG, repo: 'hello-world' }))) as { status: number; message: string };
      expect([err.status, err.message]).toEqual([401, 'Bad credentials - https://docs.github.com/rest']);
    });

    it('the fetch over public-only agents connects to no private address, literal or by name', async () => {
      const { httpAgent, httpsAgent } = publicOnlyAgents({ lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
      const fetch = githubFetch({ httpAgent, httpsAgent, maxBytes: 1 << 20, timeoutMs: 5000 });
      const port = new URL(server.url).port;
      for (const url of [`http://ghe.example.test:${port}/user`, `http://127.0.0.1:${port}/user`, 'http://169.254.169.254/latest/meta-data', 'https://10.0.0.5/api/v3/user']) {
        const err = await caught(fetch(url, { method: 'GET', headers: { authorization: `token ${fake.token}` } }));
        expect({ url, refused: err instanceof GitHubFetchError && err.failure.kind === 'private-target' }).toEqual({ url, refused: true });
      }
      expect(fake.switches.requests).toEqual([]);
      httpAgent.destroy();
      httpsAgent.destroy();
    });
  });
});
