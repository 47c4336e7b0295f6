import { AuthError, ConfigurationError, RateLimitedError, ScopeError, TargetForbiddenError, TransientError } from '@crs/connectors/provider-errors';
import type { ProviderContext, ResourceConfig, SyncCursor, SyncEvent, SyncedDocument } from '@crs/connectors/provider.port';
import { JiraApi } from '@crs/connectors/providers/jira/jira-api';
import { retryAtOf } from '@crs/connectors/providers/jira/jira-errors';
import { jiraClient, siteFromCredentials } from '@crs/connectors/providers/jira/jira-site';
import { JiraProvider, type JiraProviderOptions } from '@crs/connectors/providers/jira/jira.provider';
import { JiraFake } from '../fakes/jira/jira-fake';
import type { RunningFake } from '../fakes/loopback-server';

/**
 * The Jira provider against the Jira fake on 127.0.0.1 (no database): documents and their fields, the minute-granular
 * updated-time cursor and its overlap, pagination, edits during a crawl, back-dated changes, deletions by listing,
 * throttling, server errors, a token revoked mid-sync, the private-network refusal, and permission capture.
 */
describe('jira provider', () => {
  let fake: JiraFake;
  let server: RunningFake;
  let now: number;

  const ctx = (apiToken = fake.credentials.apiToken): ProviderContext => ({ credentials: { base_url: server.url, email: fake.credentials.email, api_token: apiToken } });
  const provider = (options: JiraProviderOptions = {}) => new JiraProvider({ allowPrivateNetworks: true, retryDelaysMs: [5, 5], clock: () => new Date(now), ...options });
  const ops = (options: Record<string, unknown> = {}): ResourceConfig => ({ resourceId: 'OPS', resourceType: 'project', name: 'Operations', options: { page_size: 2, ...options } });

  async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
    const out: T[] = [];
    for await (const x of iterable) out.push(x);
    return out;
  }

  /** One sync: its events and the cursor of its last checkpoint. */
  async function sync(cursor: SyncCursor | null, p = provider(), resource = ops()): Promise<{ events: SyncEvent[]; cursor: SyncCursor; docs: SyncedDocument[] }> {
    const events = await collect(p.sync(ctx(), resource, cursor));
    const last = events[events.length - 1];
    if (last?.kind !== 'checkpoint') throw new Error(`a sync must end with a checkpoint, not ${last?.kind}`);
    return { events, cursor: last.cursor, docs: events.flatMap((e) => (e.kind === 'upsert' ? [e.doc] : [])) };
  }

  const keysOf = (docs: SyncedDocument[]) => docs.map((d) => d.metadata.issue_key);
  const paths = () => fake.switches.requests.map((r) => r.replace(/^GET /, '').split('?')[0]);
  /** The site's host, which every group principal the provider emits carries. */
  const host = () => new URL(server.url).hostname;
  const jqlOf = (request: string) => new URL(request.replace(/^GET /, ''), 'http://x').searchParams.get('jql');

  beforeEach(async () => {
    now = Date.parse('2024-06-01T00:00:00Z');
    fake = new JiraFake();
    fake.addUser({ accountId: 'acc-ada', displayName: 'Ada Lovelace', emailAddress: 'ada@example.test' });
    fake.addUser({ accountId: 'acc-bob', displayName: 'Bob', emailAddress: 'Bob@Example.test' });
    fake.addUser({ accountId: 'acc-eve', displayName: 'Eve' });
    fake.addGroup('grp-eng', 'engineering', ['acc-ada', 'acc-bob']);
    fake.addProject('OPS', 'Operations', [{ type: 'group', value: 'grp-eng' }], [{ id: '10100', name: 'Responders', holders: [{ type: 'user', value: 'acc-ada' }, { type: 'reporter' }] }]);
    fake.addProject('SEC', 'Security', [{ type: 'anyone' }]);
    fake.addIssue('OPS', 'Rotate certificates', { description: 'The TLS certificates expire in June.', issueType: 'Task', status: 'In Progress', labels: ['tls', 'infra'], assignee: 'acc-ada', reporter: 'acc-bob' });
    fake.addIssue('OPS', 'Disk full on build agents', { description: 'Agents 3 and 4 ran out of disk.', issueType: 'Bug', reporter: 'acc-eve' });
    fake.addIssue('OPS', 'Upgrade the database', { description: 'Postgres 16 is out.', issueType: 'Story', reporter: 'acc-bob' });
    fake.addComment('OPS-1', 'acc-bob', 'Renewed the staging certificate.');
    server = await fake.start();
  });

  afterEach(() => fake.stop());

  describe('credentials and discovery', () => {
    it('validates the credentials with myself, and refuses a wrong token as the credentials, naming no secret', async () => {
      const identity = await provider().validateCredentials(ctx());
      expect(identity).toEqual({ accountScope: server.url.replace('http://', ''), displayName: `CRS connector on ${server.url.replace('http://', '')}`, warnings: [] });
      const refused = await provider().validateCredentials(ctx('ATATT-wrong-token')).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(AuthError);
      expect((refused as Error).message).toMatch(/credentials/);
      expect((refused as Error).message).not.toContain('ATATT');
    });

    it('refuses a loopback site before sending anything unless private networks are allowed, and again at connect time', async () => {
      const strict = new JiraProvider({ retryDelaysMs: [] });
      await expect(strict.validateCredentials(ctx())).rejects.toBeInstanceOf(TargetForbiddenError);
      const https = { credentials: { ...ctx().credentials, base_url: server.url.replace('http://', 'https://') } };
      await expect(strict.validateCredentials(https)).rejects.toBeInstanceOf(TargetForbiddenError);
      const named = { credentials: { ...ctx().credentials, base_url: server.url.replace('http://127.0.0.1', 'https://localhost') } };
      await expect(strict.discoverResources(named)).rejects.toBeInstanceOf(TargetForbiddenError);
      expect(fake.switches.requests).toEqual([]);
      // A name checked as public before the connection but private when it connects: the connection's own lookup
      // refuses it (the client is built as the provider builds it, without the check before).
      const site = siteFromCredentials({ ...ctx().credentials, base_url: server.url.replace('127.0.0.1', 'localhost') });
      const api = new JiraApi(jiraClient(site, ctx(), { allowPrivateNetworks: false, requestTimeoutMs: 5000, maxResponseBytes: 1_000_000 }), site, { delaysMs: [], clock: () => new Date(), maxPages: 10 });
      await expect(api.call('checking the credentials', (c) => c.myself.getCurrentUser())).rejects.toBeInstanceOf(TargetForbiddenError);
      expect(fake.switches.requests).toEqual([]);
    });

    it('discovers every project, with who holds its browse access and how many of them it cannot resolve', async () => {
      fake.addGroup('grp-all', 'everyone', ['acc-ada', 'acc-eve']);
      fake.addProject('ALL', 'Everyone', [{ type: 'group', value: 'grp-all' }]);
      const resources = await provider().discoverResources(ctx());
      expect(resources.map((r) => [r.resourceId, r.resourceType, r.name, r.details.browse_access])).toEqual([
        ['ALL', 'project', 'Everyone', { verdict: 'resource_rule', principals: 1, unresolved_members: 1 }],
        ['OPS', 'project', 'Operations', { verdict: 'listed', principals: 2, unresolved_members: 0 }],
        ['SEC', 'project', 'Security', { verdict: 'public', principals: 0, unresolved_members: 0 }],
      ]);
    });
  });

  describe('documents and the cursor', () => {
    it('syncs each issue with its comments as one document, paged, with its fields filterable', async () => {
      fake.commentsInSearch = 1;
      fake.addComment('OPS-1', 'acc-ada', 'Production is next.');
      const { events, docs } = await sync(null);
      expect(events.map((e) => e.kind)).toEqual(['upsert', 'upsert', 'checkpoint', 'upsert', 'checkpoint']);
      expect(keysOf(docs)).toEqual(['OPS-2', 'OPS-3', 'OPS-1']);
      const cert = docs[2];
      expect(cert.title).toBe('OPS-1: Rotate certificates');
      expect(cert.content).toEqual({
        kind: 'text',
        text: [
          'OPS-1: Rotate certificates',
          '',
          'Type: Task\nStatus: In Progress\nPriority: Medium\nLabels: infra, tls\nReporter: Bob\nAssignee: Ada Lovelace',
          '',
          'The TLS certificates expire in June.',
          '',
          'Comments:',
          'Bob: Renewed the staging certificate.',
          'Ada Lovelace: Production is next.',
        ].join('\n'),
      });
      expect(cert.filterableFields).toEqual({ project: 'OPS', issue_key: 'OPS-1', issue_type: 'Task', status: 'In Progress', status_category: null, priority: 'Medium', labels: 'infra, tls', assignee: 'ada@example.test', reporter: 'Bob@Example.test' });
      expect(cert.metadata).toEqual({ issue_key: 'OPS-1', issue_id: cert.id, url: `${server.url}/browse/OPS-1`, created: expect.any(String), comment_count: 2 });
      expect(cert.permission).toBeUndefined();
      // The comment field carried one comment of two: the rest came from /issue/{id}/comment.
      expect(paths().filter((p) => p.endsWith('/comment'))).toEqual([`/rest/api/3/issue/${cert.id}/comment`]);
    });

    it('an unchanged sync yields only its checkpoint, in the fewest API calls the API allows', async () => {
      const first = await sync(null);
      const p = provider();
      fake.switches.requests.length = 0;
      await p.capturePermissions(ctx(), ops());
      const listed = await collect(p.listExistingIds(ctx(), ops()));
      const again = await sync(first.cursor, p);
      expect(listed).toHaveLength(3);
      expect(again.events).toEqual([{ kind: 'checkpoint', cursor: expect.any(String) }]);
      expect(paths()).toEqual([
        '/rest/api/3/project/OPS/permissionscheme', // browse access (rule 11)
        '/rest/api/3/group/member', // its group's members
        '/rest/api/3/search/jql', // the listing, for pruning
        '/rest/api/3/myself', // the account's time zone, in which JQL dates are read
        '/rest/api/3/project/OPS/permissionscheme', // whether browse access goes to people each issue names
        '/rest/api/3/search/jql', // updated >= the cursor's minute
      ]);
      expect(jqlOf(fake.switches.requests[5])).toMatch(/^project = "OPS" AND updated >= "\d{4}-\d\d-\d\d \d\d:\d\d" ORDER BY updated ASC, key ASC$/);
    });

    it('an unchanged sync of a project whose browse access is a project role reads the role once, and its user and group', async () => {
      fake.addUser({ accountId: 'acc-cy', displayName: 'Cy', emailAddress: 'cy@example.test' });
      fake.addGroup('grp-ops', 'operations', ['acc-cy']);
      fake.addProjectRole('10002', 'Developers');
      fake.setRoleActors('OPS', '10002', [{ type: 'user', value: 'acc-ada' }, { type: 'group', value: 'grp-ops' }]);
      fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }]);
      const first = await sync(null);
      const p = provider();
      fake.switches.requests.length = 0;
      expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:cy@example.test'] });
      await collect(p.listExistingIds(ctx(), ops()));
      const again = await sync(first.cursor, p);
      expect(again.events).toEqual([{ kind: 'checkpoint', cursor: expect.any(String) }]);
      expect(paths()).toEqual([
        '/rest/api/3/project/OPS/permissionscheme', // browse access: a project role
        '/rest/api/3/project/OPS/role/10002', // the role's actors in OPS: account ids and group ids
        '/rest/api/3/user', // the email of the role's user
        '/rest/api/3/group/member', // the members of the role's group
        '/rest/api/3/search/jql', // the listing, for pruning
        '/rest/api/3/myself', // the account's time zone
        '/rest/api/3/project/OPS/permissionscheme', // whether browse access goes to people each issue names
        '/rest/api/3/search/jql', // updated >= the cursor's minute
      ]);
      expect(fake.switches.requests[1]).toBe('GET /rest/api/3/project/OPS/role/10002?excludeInactiveUsers=true');
    });

    it('an edit in the same minute as the position is not missed, and what the position already took is not repeated', async () => {
      const first = await sync(null);
      const last = fake.keyOf(first.docs[first.docs.length - 1].id)!;
      const lastUpdated = Date.parse(first.docs[first.docs.length - 1].updatedAt!);
      const sameMinute = new Date(Math.floor(lastUpdated / 60_000) * 60_000 + 59_000);
      expect(sameMinute.getTime()).toBeGreaterThan(lastUpdated);
      fake.editIssue('OPS-2', 'Disk full on build agents 3 and 4', sameMinute.toISOString().replace('Z', '+0000'));
      const second = await sync(first.cursor);
      expect(keysOf(second.docs)).toEqual(['OPS-2']);
      expect(last).toBe('OPS-1');
      expect(second.docs[0].title).toBe('OPS-2: Disk full on build agents 3 and 4');
      // the same issue edited again within that minute comes back once more
      fake.editIssue('OPS-2', 'Disk full on agents', new Date(sameMinute.getTime() + 500).toISOString().replace('Z', '+0000'));
      expect(keysOf((await sync(second.cursor)).docs)).toEqual(['OPS-2']);
    });

    it('reads the JQL bound in the account\'s time zone, so another zone misses nothing', async () => {
      fake.timeZone = 'America/New_York';
      const first = await sync(null);
      fake.editIssue('OPS-3', 'Upgrade the database to 16');
      const second = await sync(first.cursor);
      expect(keysOf(second.docs)).toEqual(['OPS-3']);
      const jql = fake.switches.requests.filter((r) => r.includes('updated+%3E%3D') || r.includes('updated >=')).map(jqlOf).pop()!;
      const bound = /updated >= "([^"]+)"/.exec(jql)![1];
      const minute = Math.floor(Date.parse(first.docs[first.docs.length - 1].updatedAt!) / 60_000) * 60_000;
      // five minutes below the position's minute; 2024-04 is daylight time in New York: four hours behind UTC
      expect(bound).toBe(new Date(minute - 5 * 60_000 - 4 * 3_600_000).toISOString().slice(0, 16).replace('T', ' '));
    });

    it('an issue that turns up late with an update a few minutes older than the position is still taken', async () => {
      const first = await sync(null);
      const position = Math.floor(Date.parse(first.docs[first.docs.length - 1].updatedAt!) / 60_000) * 60_000;
      // Jira's index took in this edit after the sync had moved past its time
      fake.editIssue('OPS-2', 'Disk full, indexed late', new Date(position - 4 * 60_000).toISOString().replace('Z', '+0000'));
      const second = await sync(first.cursor);
      expect(second.docs.map((d) => d.title)).toEqual(['OPS-2: Disk full, indexed late']);
      expect((await sync(second.cursor)).docs).toEqual([]);
    });

    it('an edit after the position is found when Berlin\'s clocks go back in between', async () => {
      fake.timeZone = 'Europe/Berlin';
      // 2026-10-25 03:00 CEST (01:00Z) becomes 02:00 CET; the last issue synced was updated at 02:40 CEST
      fake.editIssue('OPS-1', 'Rotate certificates', '2026-10-25T00:40:00.000+0000');
      const first = await sync(null);
      expect(keysOf(first.docs)).toEqual(['OPS-2', 'OPS-3', 'OPS-1']);
      fake.editIssue('OPS-3', 'Upgrade the database, after the position', '2026-10-25T00:50:00.000+0000');
      expect((await sync(first.cursor)).docs.map((d) => d.title)).toEqual(['OPS-3: Upgrade the database, after the position']);
    });

    it('an issue edited during the crawl comes again at the end, and none is skipped', async () => {
      for (let n = 4; n <= 8; n++) fake.addIssue('OPS', `Issue ${n}`);
      // after the time zone, the browse grants and the first page, OPS-2 (already taken) is edited and OPS-7 (not yet) too
      fake.switches.afterRequests(3, () => {
        fake.editIssue('OPS-2', 'Disk full, edited during the crawl');
        fake.editIssue('OPS-7', 'Issue 7, edited during the crawl');
      });
      const { docs } = await sync(null);
      expect(keysOf(docs)).toEqual(['OPS-2', 'OPS-3', 'OPS-1', 'OPS-4', 'OPS-5', 'OPS-6', 'OPS-8', 'OPS-2', 'OPS-7']);
      expect(docs[7].title).toBe('OPS-2: Disk full, edited during the crawl');
      expect(new Set(keysOf(docs))).toEqual(new Set(['OPS-1', 'OPS-2', 'OPS-3', 'OPS-4', 'OPS-5', 'OPS-6', 'OPS-7', 'OPS-8']));
    });

    it('a back-dated edit or import is invisible to the updated-time query and found by the next full re-read', async () => {
      const first = await sync(null);
      fake.editIssue('OPS-3', 'Upgrade the database, imported', '2023-01-01T00:00:00.000+0000');
      fake.addIssue('OPS', 'Imported from the old tracker', { at: '2022-05-05T10:00:00.000+0000' });
      now += 3_600_000;
      const incremental = await sync(first.cursor);
      expect(incremental.docs).toEqual([]);
      now += 24 * 3_600_000;
      const sweep = await sync(incremental.cursor);
      expect(keysOf(sweep.docs)).toEqual(['OPS-4', 'OPS-3', 'OPS-2', 'OPS-1']);
      expect(sweep.docs[1].title).toBe('OPS-3: Upgrade the database, imported');
      // unchanged issues come with the hash they had: the caller skips them
      expect(sweep.docs.find((d) => d.metadata.issue_key === 'OPS-1')!.contentHash).toBe(first.docs.find((d) => d.metadata.issue_key === 'OPS-1')!.contentHash);
      // the re-read moved the sweep time: the next sync is incremental again
      expect((await sync(sweep.cursor)).docs).toEqual([]);
    });

    it('lists every issue by key for pruning, and a deletion while it pages drops no other issue', async () => {
      for (let n = 4; n <= 7; n++) fake.addIssue('OPS', `Issue ${n}`);
      fake.switches.maxPageSize = 2;
      const keys = new Map(['OPS-1', 'OPS-2', 'OPS-3', 'OPS-4', 'OPS-5', 'OPS-6', 'OPS-7'].map((k) => [fake.issueId(k), k]));
      fake.switches.afterRequests(1, () => fake.deleteIssue('OPS-1'));
      const listed = await collect(provider().listExistingIds(ctx(), ops()));
      expect(listed.map((d) => keys.get(d.id))).toEqual(['OPS-1', 'OPS-2', 'OPS-3', 'OPS-4', 'OPS-5', 'OPS-6', 'OPS-7']);
      expect(listed.every((d) => d.contentHash === undefined)).toBe(true);
      const again = await collect(provider().listExistingIds(ctx(), ops()));
      expect(again.map((d) => fake.keyOf(d.id))).toEqual(['OPS-2', 'OPS-3', 'OPS-4', 'OPS-5', 'OPS-6', 'OPS-7']);
    });
  });

  describe('failures', () => {
    it('a 429 becomes a RateLimitedError with the reset time, without waiting or retrying', async () => {
      const first = await sync(null);
      fake.editIssue('OPS-3', 'Upgrade the database now');
      fake.switches.rateLimitNext(1, 600);
      const started = Date.now();
      const error = await sync(first.cursor).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateLimitedError);
      expect(Math.abs((error as RateLimitedError).retryAt.getTime() - (started + 600_000))).toBeLessThan(2000);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(fake.switches.requests.slice(-1)).toEqual([expect.stringMatching(/myself/)]);
    });

    it('reads Retry-After as every provider does: fractional seconds, and an HTTP date already past is now', () => {
      const at = new Date('2024-06-01T00:00:00Z');
      expect(retryAtOf({ 'retry-after': '2.5' }, at).toISOString()).toBe('2024-06-01T00:00:02.500Z');
      expect(retryAtOf({ 'retry-after': 'Fri, 31 May 2024 23:59:00 GMT' }, at).toISOString()).toBe('2024-06-01T00:00:00.000Z');
      expect(retryAtOf({ 'retry-after': '30', 'x-ratelimit-reset': '2024-06-01T00:05:00Z' }, at).toISOString()).toBe('2024-06-01T00:05:00.000Z');
      expect(retryAtOf({}, at).toISOString()).toBe('2024-06-01T00:01:00.000Z');
    });

    it('retries a short 5xx burst; a longer one is a TransientError', async () => {
      fake.switches.failNext(2, 503);
      const { docs } = await sync(null);
      expect(docs).toHaveLength(3);
      expect(paths().slice(0, 3)).toEqual(['/rest/api/3/myself', '/rest/api/3/myself', '/rest/api/3/myself']);
      fake.switches.failNext(3, 502);
      await expect(sync(null)).rejects.toBeInstanceOf(TransientError);
    });

    it('a token revoked mid-sync fails the sync with an AuthError after the pages already given', async () => {
      fake.switches.afterRequests(3, () => fake.switches.revokeToken(fake.credential));
      const events: SyncEvent[] = [];
      const error = await (async () => {
        for await (const e of provider().sync(ctx(), ops(), null)) events.push(e);
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthError);
      expect(events.map((e) => e.kind)).toEqual(['upsert', 'upsert', 'checkpoint']);
    });

    it('a search that does not move on stops with a TransientError, in the crawl and in the listing, instead of looping', async () => {
      fake.searchStuck = true;
      const crawl = await collect(provider().sync(ctx(), ops(), null)).catch((e: unknown) => e);
      expect(crawl).toBeInstanceOf(TransientError);
      expect((crawl as Error).message).toBe(`Jira on ${server.url} answered with a page already read as the next page of the issues of project OPS; the listing was stopped there and is tried again later.`);
      const listing = await collect(provider().listExistingIds(ctx(), ops())).catch((e: unknown) => e);
      expect(listing).toBeInstanceOf(TransientError);
      expect((listing as Error).message).toMatch(/the next page of the issue ids of project OPS;/);
    });

    it('a listing past maxPages pages stops with a ConfigurationError naming it', async () => {
      fake.switches.maxPageSize = 1;
      await expect(collect(provider({ maxPages: 3 }).listExistingIds(ctx(), ops()))).resolves.toHaveLength(3);
      const stopped = await collect(provider({ maxPages: 2 }).listExistingIds(ctx(), ops())).catch((e: unknown) => e);
      expect(stopped).toBeInstanceOf(ConfigurationError);
      expect((stopped as Error).message).toBe(`Reading the issue ids of project OPS on ${server.url} ran past 2 pages, the most the connector reads of one listing; the listing was stopped there.`);
      // a group paged past the limit too
      const capture = await provider({ maxPages: 1 }).capturePermissions(ctx(), ops()).catch((e: unknown) => e);
      expect(capture).toBeInstanceOf(ConfigurationError);
      expect((capture as Error).message).toMatch(/^Reading the members of group grp-eng on .* ran past 1 pages/);
    });

    it('an answer larger than maxResponseBytes is refused with a ConfigurationError, naming no secret', async () => {
      fake.addIssue('OPS', 'A long one', { description: 'x'.repeat(20_000) });
      await expect(collect(provider({ maxResponseBytes: 1_000_000 }).sync(ctx(), ops(), null))).resolves.toHaveLength(6);
      const refused = await collect(provider({ maxResponseBytes: 10_000 }).sync(ctx(), ops(), null)).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConfigurationError);
      expect((refused as Error).message).toBe(`Jira's answer was larger than 10000 bytes, the most the connector reads of one answer, while reading the issues of project OPS on ${server.url}; it was refused. A smaller page_size makes the answers of an issue search smaller.`);
      expect((refused as Error).message).not.toContain(fake.credentials.apiToken);
    });

    it('a project that no longer exists is gone', async () => {
      await expect(collect(provider().listExistingIds(ctx(), { ...ops(), resourceId: 'GONE' }))).rejects.toMatchObject({ kind: 'resource_gone' });
    });
  });

  describe('permissions', () => {
    it('captures browse access: groups expanded, anyone public, application roles as a principal, hidden emails leave it to the resource rule', async () => {
      const p = provider();
      expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test'] });
      expect(await p.capturePermissions(ctx(), { ...ops(), resourceId: 'SEC' })).toEqual({ status: 'captured', acl: ['__public__'] });
      fake.setBrowse('OPS', [{ type: 'applicationRole' }, { type: 'user', value: 'acc-bob' }, { type: 'reporter' }]);
      expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: [`group:jira:${host()}:app:any`, 'user_email:bob@example.test'] });
      // every user of one application: not public, a principal of the site that a caller declares
      fake.setBrowse('OPS', [{ type: 'applicationRole', value: 'jira-software' }]);
      expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: [`group:jira:${host()}:app:jira-software`] });
      fake.setBrowse('OPS', [{ type: 'user', value: 'acc-ada' }, { type: 'user', value: 'acc-eve' }]);
      expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: null, unresolved: 1 });
      fake.setBrowse('OPS', [{ type: 'anyone' }, { type: 'user', value: 'acc-eve' }]);
      expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['__public__'] });
      fake.setBrowse('OPS', []);
      expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['__private__'] });
    });

    describe('project roles', () => {
      beforeEach(() => {
        fake.addUser({ accountId: 'acc-cy', displayName: 'Cy', emailAddress: 'cy@example.test' });
        fake.addGroup('grp-ops', 'operations', ['acc-cy']);
        fake.addProjectRole('10002', 'Developers');
        fake.addProjectRole('10003', 'Users');
      });

      it('a role holding browse access is its users and its groups\' members, by email; a role change applies on the next capture', async () => {
        fake.setRoleActors('OPS', '10002', [{ type: 'user', value: 'acc-ada' }, { type: 'group', value: 'grp-ops' }]);
        // the same role in another project has other actors: only the project's own count
        fake.setRoleActors('SEC', '10002', [{ type: 'user', value: 'acc-bob' }]);
        fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }]);
        const p = provider();
        expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:cy@example.test'] });
        fake.setRoleActors('OPS', '10002', [{ type: 'user', value: 'acc-bob' }, { type: 'group', value: 'grp-ops' }]);
        expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:bob@example.test', 'user_email:cy@example.test'] });
        // two roles and a group granted directly: each read once, everyone listed once
        fake.setRoleActors('OPS', '10003', [{ type: 'group', value: 'grp-eng' }, { type: 'group', value: 'grp-ops' }]);
        fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }, { type: 'projectRole', value: '10003' }, { type: 'group', value: 'grp-ops' }]);
        fake.switches.requests.length = 0;
        expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test', 'user_email:cy@example.test'] });
        expect(paths()).toEqual(['/rest/api/3/project/OPS/permissionscheme', '/rest/api/3/project/OPS/role/10002', '/rest/api/3/user', '/rest/api/3/group/member', '/rest/api/3/project/OPS/role/10003', '/rest/api/3/group/member']);
        // a deactivated actor is left out, as Jira lets them sign in nowhere
        fake.setUserActive('acc-bob', false);
        expect(await p.capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:cy@example.test'] });
      });

      it('a role actor whose email is hidden is counted unresolved, once however many grants reach them', async () => {
        fake.setRoleActors('OPS', '10002', [{ type: 'user', value: 'acc-ada' }, { type: 'user', value: 'acc-eve' }]);
        fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }]);
        expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: null, unresolved: 1 });
        fake.addGroupMember('grp-ops', 'acc-eve');
        fake.setRoleActors('OPS', '10003', [{ type: 'group', value: 'grp-ops' }]);
        fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }, { type: 'projectRole', value: '10003' }, { type: 'user', value: 'acc-eve' }]);
        expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: null, unresolved: 1 });
        const discovered = await provider().discoverResources(ctx());
        expect(discovered.find((r) => r.resourceId === 'OPS')!.details.browse_access).toEqual({ verdict: 'resource_rule', principals: 2, unresolved_members: 1 });
        // public browse reaches the hidden actor too
        fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }, { type: 'anyone' }]);
        expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['__public__'] });
      });

      it('past 1,000 people a role\'s groups become group principals and its users stay emails', async () => {
        const many = Array.from({ length: 1200 }, (_, n) => `acc-${n}`);
        for (const id of many) fake.addUser({ accountId: id, displayName: id, emailAddress: `${id}@example.test` });
        fake.addGroup('grp-big', 'big', many);
        fake.setRoleActors('OPS', '10002', [{ type: 'group', value: 'grp-big' }, { type: 'user', value: 'acc-ada' }]);
        fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }, { type: 'group', value: 'grp-ops' }]);
        expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: [`group:jira:${host()}:grp-big`, `group:jira:${host()}:grp-ops`, 'user_email:ada@example.test'] });
      });

      it('reading a role goes through the same error handling: 5xx retried, 429 rate limited, 401 the credentials, 404 a missing permission', async () => {
        fake.setRoleActors('OPS', '10002', [{ type: 'user', value: 'acc-ada' }]);
        fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }]);
        fake.switches.afterRequests(1, () => fake.switches.failNext(2, 503));
        expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test'] });
        expect(paths().filter((x) => x.includes('/role/'))).toEqual(['/rest/api/3/project/OPS/role/10002', '/rest/api/3/project/OPS/role/10002', '/rest/api/3/project/OPS/role/10002']);

        const until = new Date(Date.now() + 3_600_000);
        fake.throttleMatching((url) => url.includes('/role/'), 0, until);
        const limited = await provider().capturePermissions(ctx(), ops()).catch((e: unknown) => e);
        expect(limited).toBeInstanceOf(RateLimitedError);
        expect((limited as RateLimitedError).retryAt.toISOString()).toBe(until.toISOString());

        fake.switches.afterRequests(1, () => fake.switches.revokeToken(fake.credential));
        await expect(provider().capturePermissions(ctx(), ops())).rejects.toBeInstanceOf(AuthError);
        fake.switches.restoreToken(fake.credential);

        // Jira answers 404 both for a role that is gone and for an account without Administer Projects
        fake.setBrowse('OPS', [{ type: 'projectRole', value: '10999' }]);
        const refused = await provider().capturePermissions(ctx(), ops()).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(ScopeError);
        expect((refused as Error).message).toMatch(/^Jira answered 404 while reading the project role 10999 of project OPS on http:\/\/127\.0\.0\.1:\d+: the account lacks Administer Projects/);
        const discovered = await provider().discoverResources(ctx());
        expect(discovered.find((r) => r.resourceId === 'OPS')!.details.browse_access).toEqual({ error: (refused as Error).message });
      });

      it('a security level naming a role is its actors who may browse; the role is read once per sync, and a role change is a permission event', async () => {
        fake.setRoleActors('OPS', '10002', [{ type: 'user', value: 'acc-ada' }, { type: 'group', value: 'grp-ops' }]);
        fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }, { type: 'user', value: 'acc-bob' }]);
        fake.setSecurityLevelHolders('OPS', '10100', [{ type: 'projectRole', value: '10002' }]);
        fake.setSecurityLevel('OPS-3', '10100');
        const first = await sync(null);
        const ops3 = first.docs.find((d) => d.metadata.issue_key === 'OPS-3')!;
        expect(ops3.permission).toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:cy@example.test'] });
        expect(paths().filter((x) => x.includes('/role/'))).toEqual(['/rest/api/3/project/OPS/role/10002']);

        fake.setRoleActors('OPS', '10002', [{ type: 'user', value: 'acc-bob' }, { type: 'user', value: 'acc-eve' }]);
        const second = await sync(first.cursor);
        // Bob may browse (granted directly); Eve hides her email and is counted
        expect(second.events).toEqual([
          { kind: 'permission', id: ops3.id, permission: { status: 'captured', acl: ['user_email:bob@example.test'], unresolved: 1 } },
          { kind: 'checkpoint', cursor: expect.any(String) },
          { kind: 'checkpoint', cursor: expect.any(String) },
        ]);
        expect((await sync(second.cursor)).events).toEqual([{ kind: 'checkpoint', cursor: expect.any(String) }]);
      });
    });

    it('a deactivated account is granted nothing: not as a user holder, a group member, nor a level\'s reporter', async () => {
      fake.setUserActive('acc-bob', false);
      fake.setBrowse('OPS', [{ type: 'user', value: 'acc-ada' }, { type: 'user', value: 'acc-bob' }]);
      expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test'] });
      fake.setBrowse('OPS', [{ type: 'group', value: 'grp-eng' }]);
      expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test'] });
      // OPS-3's reporter is Bob, whom the level grants as reporter (and anyone may browse): left out, and not counted
      // as someone unnamed
      fake.setBrowse('OPS', [{ type: 'anyone' }]);
      fake.setSecurityLevel('OPS-3', '10100');
      const { docs } = await sync(null);
      expect(docs.find((d) => d.metadata.issue_key === 'OPS-3')!.permission).toEqual({ status: 'captured', acl: ['user_email:ada@example.test'] });
    });

    it('the project lead is a user holder; a kind of holder the connector does not know leaves the project to the resource rule, counted', async () => {
      fake.setBrowse('OPS', [{ type: 'projectLead' }]);
      expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test'] });
      fake.setBrowse('OPS', [{ type: 'user', value: 'acc-bob' }, { type: 'sd.customer.portal.only' }]);
      expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: null, unresolved: 1 });
      const discovered = await provider().discoverResources(ctx());
      expect(discovered.find((r) => r.resourceId === 'OPS')!.details.browse_access).toEqual({ verdict: 'resource_rule', principals: 1, unresolved_members: 1 });
      // the groups a group-picker field names grant per issue under a condition the connector does not read: left out
      fake.setBrowse('OPS', [{ type: 'user', value: 'acc-bob' }, { type: 'groupCustomField', value: 'customfield_10020' }]);
      expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:bob@example.test'] });
    });

    it('browse access to an issue\'s reporter, assignee and user-picker field adds them to that issue\'s own permission, and follows their changes', async () => {
      fake.addUser({ accountId: 'acc-cy', displayName: 'Cy', emailAddress: 'cy@example.test' });
      fake.updateIssue('OPS-3', { customFields: { customfield_10010: ['acc-cy'] } });
      fake.setBrowse('OPS', [{ type: 'user', value: 'acc-ada' }, { type: 'reporter' }, { type: 'assignee' }, { type: 'userCustomField', value: 'customfield_10010' }]);
      // the project's verdict names only who may browse every issue
      expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: ['user_email:ada@example.test'] });
      const first = await sync(null);
      const id = (key: string) => fake.issueId(key);
      const permissions = (docs: SyncedDocument[]) => Object.fromEntries(docs.map((d) => [d.metadata.issue_key, d.permission]));
      expect(permissions(first.docs)).toEqual({
        'OPS-1': { status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test'] }, // reporter Bob, assignee Ada
        'OPS-2': { status: 'captured', acl: ['user_email:ada@example.test'], unresolved: 1 }, // reporter Eve hides her email
        'OPS-3': { status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test', 'user_email:cy@example.test'] }, // and Cy in the field
      });
      // a new reporter is an edit: the issue comes again with its new permission
      fake.updateIssue('OPS-1', { reporter: 'acc-cy' });
      const second = await sync(first.cursor);
      expect(permissions(second.docs)).toEqual({ 'OPS-1': { status: 'captured', acl: ['user_email:ada@example.test', 'user_email:cy@example.test'] } });
      // a change of the project's list moves no issue: a permission event for each issue
      fake.setBrowse('OPS', [{ type: 'user', value: 'acc-bob' }, { type: 'reporter' }, { type: 'assignee' }, { type: 'userCustomField', value: 'customfield_10010' }]);
      const third = await sync(second.cursor);
      expect(third.events).toEqual([
        { kind: 'permission', id: id('OPS-1'), permission: { status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test', 'user_email:cy@example.test'] } },
        { kind: 'permission', id: id('OPS-2'), permission: { status: 'captured', acl: ['user_email:bob@example.test'], unresolved: 1 } },
        { kind: 'permission', id: id('OPS-3'), permission: { status: 'captured', acl: ['user_email:bob@example.test', 'user_email:cy@example.test'] } },
        { kind: 'checkpoint', cursor: expect.any(String) },
        { kind: 'checkpoint', cursor: expect.any(String) },
      ]);
      expect((await sync(third.cursor)).events).toEqual([{ kind: 'checkpoint', cursor: expect.any(String) }]);
      // without grants to the issue's own people, no issue keeps a permission of its own
      fake.setBrowse('OPS', [{ type: 'user', value: 'acc-bob' }]);
      expect((await sync(third.cursor)).events).toEqual([
        ...['OPS-1', 'OPS-2', 'OPS-3'].map((key) => ({ kind: 'permission', id: id(key), permission: { status: 'captured', acl: null } })),
        { kind: 'checkpoint', cursor: expect.any(String) },
        { kind: 'checkpoint', cursor: expect.any(String) },
      ]);
    });

    it('an issue with a level is shown to its reporter when browse access goes to the reporter; a level open to anyone under an application role is not public', async () => {
      fake.setBrowse('OPS', [{ type: 'user', value: 'acc-ada' }, { type: 'reporter' }]);
      fake.setSecurityLevel('OPS-3', '10100');
      // the level grants Ada and the reporter (Bob), who may browse OPS-3 as its reporter
      expect((await sync(null)).docs.find((d) => d.metadata.issue_key === 'OPS-3')!.permission).toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test'] });
      fake.setBrowse('OPS', [{ type: 'applicationRole' }]);
      fake.setSecurityLevelHolders('OPS', '10100', [{ type: 'anyone' }]);
      expect((await sync(null)).docs.find((d) => d.metadata.issue_key === 'OPS-3')!.permission).toEqual({ status: 'captured', acl: [`group:jira:${host()}:app:any`] });
    });

    it('more than 1,000 people become group principals, never a truncated list', async () => {
      const many = Array.from({ length: 1200 }, (_, n) => `acc-${n}`);
      for (const id of many) fake.addUser({ accountId: id, displayName: id, emailAddress: `${id}@example.test` });
      fake.addGroup('grp-big', 'big', many);
      fake.setBrowse('OPS', [{ type: 'group', value: 'grp-big' }, { type: 'user', value: 'acc-ada' }]);
      expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: [`group:jira:${host()}:grp-big`, 'user_email:ada@example.test'] });
      fake.setBrowse('OPS', many.slice(0, 1001).map((value) => ({ type: 'user' as const, value })));
      expect(await provider().capturePermissions(ctx(), ops())).toEqual({ status: 'captured', acl: [`group:jira:${host()}:browse:ops`] });
      // the same group on another site (another connector) is another principal: the site's host is part of it
      const other = { credentials: { ...ctx().credentials, base_url: server.url.replace('127.0.0.1', 'localhost') } };
      fake.setBrowse('OPS', [{ type: 'group', value: 'grp-big' }, { type: 'user', value: 'acc-ada' }]);
      expect(await provider().capturePermissions(other, ops())).toEqual({ status: 'captured', acl: ['group:jira:localhost:grp-big', 'user_email:ada@example.test'] });
    });

    it('an issue with a security level carries the level\'s members (and its reporter, when the level grants it) as its permission', async () => {
      fake.setSecurityLevel('OPS-3', '10100');
      fake.setSecurityLevel('OPS-2', '10100');
      const { docs } = await sync(null);
      const byKey = Object.fromEntries(docs.map((d) => [d.metadata.issue_key, d]));
      expect(byKey['OPS-1'].permission).toBeUndefined();
      expect(byKey['OPS-3'].permission).toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test'] });
      // OPS-2's reporter hides their email: the level's other members only, never the project
      expect(byKey['OPS-2'].permission).toEqual({ status: 'captured', acl: ['user_email:ada@example.test'], unresolved: 1 });
      // a member of the level who may not browse the project does not see its issues, as in Jira
      fake.addUser({ accountId: 'acc-zed', displayName: 'Zed', emailAddress: 'zed@example.test' });
      fake.setSecurityLevelHolders('OPS', '10100', [{ type: 'user', value: 'acc-zed' }, { type: 'reporter' }]);
      const again = await sync(null);
      expect(again.docs.filter((d) => d.permission).map((d) => [d.metadata.issue_key, d.permission])).toEqual([
        ['OPS-3', { status: 'captured', acl: ['user_email:bob@example.test'] }],
        ['OPS-2', { status: 'captured', acl: ['__private__'], unresolved: 1 }],
      ]);
    });

    it('a change of a level\'s members moves no issue: the next sync gives a permission event for each of its issues', async () => {
      fake.setSecurityLevel('OPS-3', '10100');
      const first = await sync(null);
      fake.setSecurityLevelHolders('OPS', '10100', [{ type: 'group', value: 'grp-eng' }]);
      const second = await sync(first.cursor);
      expect(second.events).toEqual([
        { kind: 'permission', id: first.docs.find((d) => d.metadata.issue_key === 'OPS-3')!.id, permission: { status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test'] } },
        { kind: 'checkpoint', cursor: expect.any(String) },
        { kind: 'checkpoint', cursor: expect.any(String) },
      ]);
      expect((await sync(second.cursor)).events).toEqual([{ kind: 'checkpoint', cursor: expect.any(String) }]);
    });
  });
});
