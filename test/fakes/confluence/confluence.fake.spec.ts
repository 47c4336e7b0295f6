import { ConfluenceClient, type Models } from 'confluence.js';
import type { RunningFake } from '../loopback-server';
import { ConfluenceFake } from './confluence-fake';

/** The seeded wiki: one space readable by a group and one user, a page tree three deep, and a hidden email. */
function seed(fake: ConfluenceFake): Record<string, string> {
  fake.addUser({ accountId: 'acc-ada', displayName: 'Ada', email: 'ada@example.test' });
  fake.addUser({ accountId: 'acc-bob', displayName: 'Bob', email: 'bob@example.test' });
  fake.addUser({ accountId: 'acc-eve', displayName: 'Eve', email: '' });
  fake.addGroup('grp-eng', 'engineering', ['acc-ada', 'acc-bob', 'acc-eve']);
  fake.addSpace('ENG', 'Engineering', { groups: ['grp-eng'], users: ['acc-ada'] });
  fake.addSpace('HR', 'People', { anonymous: true });
  const home = fake.addPage('ENG', 'Home', '<p>Welcome</p>');
  const runbooks = fake.addPage('ENG', 'Runbooks', '<p>Index</p>', home);
  const restart = fake.addPage('ENG', 'Restart the API', '<p>Step 1</p>', runbooks);
  const onboarding = fake.addPage('ENG', 'Onboarding', '<p>Day 1</p>', home);
  fake.addPage('HR', 'Holidays', '<p>Calendar</p>');
  return { home, runbooks, restart, onboarding };
}

describe('Confluence Cloud REST v1 fake, driven by confluence.js', () => {
  let fake: ConfluenceFake;
  let server: RunningFake;
  let wiki: ConfluenceClient;
  let ids: Record<string, string>;

  const client = (apiToken = fake.credentials.apiToken) => new ConfluenceClient({ host: server.url, authentication: { basic: { email: fake.credentials.email, apiToken } } });

  /** Every page a CQL query returns, following the cursor in `_links.next`, and how many requests that took. */
  async function searchAll(cql: string, limit: number): Promise<{ pages: number; results: Models.Content[] }> {
    const results: Models.Content[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await wiki.content.searchContentByCQL({ cql, limit, cursor, expand: ['version', 'ancestors'] });
      results.push(...page.results);
      pages++;
      if (!page._links.next) return { pages, results };
      cursor = new URL(page._links.next, server.url).searchParams.get('cursor') ?? undefined;
    }
  }

  beforeEach(async () => {
    fake = new ConfluenceFake();
    ids = seed(fake);
    server = await fake.start();
    wiki = client();
  });

  afterEach(() => fake.stop());

  it('checks the credentials and lists spaces with their read permissions', async () => {
    expect(await wiki.users.getCurrentUser()).toMatchObject({ accountId: 'crs-connector' });
    const first = await wiki.space.getSpaces({ limit: 1, expand: ['permissions'] });
    expect([first.results.map((s) => s.key), first._links.next]).toEqual([['ENG'], '/rest/api/space?limit=1&start=1']);
    const read = first.results[0].permissions![0];
    expect(read.operation).toEqual({ operation: 'read', targetType: 'space' });
    expect(read.subjects.group!.results.map((g) => [g.id, g.name])).toEqual([['grp-eng', 'engineering']]);
    expect(read.subjects.user!.results.map((u) => u.email)).toEqual(['ada@example.test']);
    const second = await wiki.space.getSpaces({ limit: 1, start: 1, expand: ['permissions'] });
    expect([second.results[0].key, second.results[0].permissions![0].anonymousAccess, second._links.next]).toEqual(['HR', true, undefined]);
  });

  it('pages a space by CQL cursor in last-modified order, with versions and ancestors', async () => {
    const { pages, results } = await searchAll('space = "ENG" and type = page order by lastmodified asc', 3);
    expect(pages).toBe(2);
    expect(results.map((p) => p.title)).toEqual(['Home', 'Runbooks', 'Restart the API', 'Onboarding']);
    expect(results.map((p) => p.version!.number)).toEqual([1, 1, 1, 1]);
    expect(results[2].ancestors!.map((a) => a.title)).toEqual(['Home', 'Runbooks']);
    const page = await wiki.content.getContentById({ id: ids.restart, expand: ['body.storage'] });
    expect(page.body!.storage!.value).toBe('<p>Step 1</p>');
  });

  it('follows last-modified with a minute overlap, and a sweep of restrictions finds what that query cannot', async () => {
    const { results } = await searchAll('space = "ENG" order by lastmodified asc', 25);
    const cursor = results.at(-1)!.version!.when.slice(0, 16).replace('T', ' ');
    fake.editPage(ids.runbooks, '<p>Index v2</p>');
    fake.deletePage(ids.onboarding);
    fake.restrictRead(ids.runbooks, ['acc-ada'], []);

    const since = await searchAll(`space = "ENG" and lastmodified >= "${cursor}" order by lastmodified asc`, 25);
    expect(since.results.map((p) => [p.title, p.version!.number])).toEqual([['Runbooks', 2]]);

    const restrictions = await wiki.contentRestrictions.getRestrictionsForOperation({ id: ids.runbooks, operationKey: 'read' });
    expect(restrictions.restrictions!.user!.results.map((u) => u.accountId)).toEqual(['acc-ada']);
    const child = await wiki.contentRestrictions.getRestrictionsForOperation({ id: ids.restart, operationKey: 'read' });
    expect(child.restrictions!.user!.results).toEqual([]);
    const childPage = await wiki.content.getContentById({ id: ids.restart, expand: ['ancestors', 'version'] });
    expect([childPage.ancestors!.map((a) => a.id), childPage.version!.number]).toEqual([[ids.home, ids.runbooks], 1]);
    expect((await searchAll('space = "ENG"', 25)).results.map((p) => p.id)).not.toContain(ids.onboarding);
  });

  it('hides a back-dated edit from a last-modified query', async () => {
    const { results } = await searchAll('space = "ENG" order by lastmodified desc', 25);
    const cursor = results[0].version!.when.slice(0, 16).replace('T', ' ');
    fake.editPage(ids.home, '<p>Restored from an old copy</p>', '2023-01-01T00:00:00.000Z');
    const since = await searchAll(`space = "ENG" and lastmodified >= "${cursor}"`, 25);
    expect(since.results.map((p) => p.id)).not.toContain(ids.home);
  });

  it('expands a group into its members, whose email may be hidden', async () => {
    const first = await wiki.group.getGroupMembersByGroupId({ groupId: 'grp-eng', limit: 2 });
    const second = await wiki.group.getGroupMembersByGroupId({ groupId: 'grp-eng', start: 2, limit: 2 });
    expect([...first.results, ...second.results].map((u) => [u.accountId, u.email])).toEqual([['acc-ada', 'ada@example.test'], ['acc-bob', 'bob@example.test'], ['acc-eve', '']]);
  });

  it('surfaces 429 and 5xx as errors the connector retries: confluence.js neither retries nor keeps the status headers', async () => {
    fake.switches.rateLimitNext(1, 20);
    fake.switches.failNext(1, 503);
    // The client rethrows the response body alone: the status survives only because the body carries it, Retry-After is lost.
    await expect(wiki.users.getCurrentUser()).rejects.toEqual({ statusCode: 429, message: 'Rate limit exceeded' });
    await expect(wiki.users.getCurrentUser()).rejects.toMatchObject({ statusCode: 503 });
    expect(await wiki.users.getCurrentUser()).toMatchObject({ accountId: 'crs-connector' });
    expect(fake.switches.requests).toHaveLength(3);
  });

  it('expands read restrictions on content in a search, as the restriction sweep reads them', async () => {
    fake.restrictRead(ids.runbooks, ['acc-ada'], ['grp-eng']);
    const { results } = await wiki.content.searchContentByCQL({ cql: 'space = "ENG" and type = page', expand: ['restrictions.read.restrictions.user', 'restrictions.read.restrictions.group'] });
    const read = (id: string) => results.find((p) => p.id === id)!.restrictions!.read!.restrictions!;
    expect([read(ids.runbooks).user!.results.map((u) => u.accountId), read(ids.runbooks).group!.results.map((g) => g.id)]).toEqual([['acc-ada'], ['grp-eng']]);
    expect([read(ids.restart).user!.results, read(ids.restart).group!.results]).toEqual([[], []]);
  });

  it('throttles the request after a matching search with an HTTP-date Retry-After, and suspends and restores a credential', async () => {
    const until = new Date('2031-01-01T01:00:00Z');
    fake.throttleAfter((url) => url.includes('limit=2'), until);
    await expect(searchAll('space = "ENG"', 2)).rejects.toEqual({ statusCode: 429, message: 'Rate limit exceeded' });
    expect(fake.switches.requests).toHaveLength(2);
    await expect(wiki.users.getCurrentUser()).resolves.toMatchObject({ accountId: 'crs-connector' });
    fake.suspendCredential();
    await expect(wiki.users.getCurrentUser()).rejects.toMatchObject({ statusCode: 401 });
    fake.restoreCredential();
    expect(await wiki.users.getCurrentUser()).toMatchObject({ accountId: 'crs-connector' });
  });

  it('fails with 401 when the API token is revoked mid-sync', async () => {
    fake.switches.afterRequests(1, () => fake.switches.revokeToken(fake.credential));
    await expect(searchAll('space = "ENG"', 2)).rejects.toMatchObject({ statusCode: 401 });
    expect(fake.switches.requests).toHaveLength(2);
  });
});
