import { HttpException, Version3Client } from 'jira.js';
import type { RunningFake } from '../loopback-server';
import { JiraFake, type JiraSearchedIssue } from './jira-fake';

/** The seeded tracker: two projects, a group, users with and without a visible email, and a security level. */
function seed(fake: JiraFake): void {
  fake.addUser({ accountId: 'acc-ada', displayName: 'Ada', emailAddress: 'ada@example.test' });
  fake.addUser({ accountId: 'acc-bob', displayName: 'Bob', emailAddress: 'bob@example.test' });
  fake.addUser({ accountId: 'acc-eve', displayName: 'Eve' });
  fake.addGroup('grp-eng', 'engineering', ['acc-ada', 'acc-bob', 'acc-eve']);
  fake.addProject('OPS', 'Operations', [{ type: 'applicationRole' }]);
  fake.addProject('SEC', 'Security', [{ type: 'group', value: 'grp-eng' }], [{ id: '10100', name: 'Incident responders', holders: [{ type: 'user', value: 'acc-ada' }] }]);
  for (let n = 1; n <= 7; n++) fake.addIssue('SEC', `Finding ${n}`);
  fake.setSecurityLevel('SEC-3', '10100');
  fake.addIssue('OPS', 'Rotate certificates');
}

describe('Jira Cloud REST v3 fake, driven by jira.js', () => {
  let fake: JiraFake;
  let server: RunningFake;
  let jira: Version3Client;

  const client = (apiToken = fake.credentials.apiToken) => new Version3Client({ host: server.url, authentication: { basic: { email: fake.credentials.email, apiToken } } });

  /** Every issue a JQL query returns, following nextPageToken, and how many pages that took. */
  async function searchAll(jql: string, maxResults: number): Promise<{ pages: number; issues: JiraSearchedIssue[] }> {
    const issues: JiraSearchedIssue[] = [];
    let nextPageToken: string | undefined;
    let pages = 0;
    do {
      const page = await jira.issueSearch.searchForIssuesUsingJqlEnhancedSearch({ jql, maxResults, nextPageToken, fields: ['summary', 'updated', 'security'] });
      issues.push(...((page.issues ?? []) as JiraSearchedIssue[]));
      nextPageToken = page.nextPageToken;
      pages++;
    } while (nextPageToken);
    return { pages, issues };
  }

  beforeEach(async () => {
    fake = new JiraFake();
    seed(fake);
    server = await fake.start();
    jira = client();
  });

  afterEach(() => fake.stop());

  it('checks the credentials with myself and lists projects by startAt', async () => {
    expect(await jira.myself.getCurrentUser()).toMatchObject({ accountId: 'crs-connector', emailAddress: 'crs-connector@example.test' });
    const first = await jira.projects.searchProjects({ maxResults: 1 });
    const second = await jira.projects.searchProjects({ startAt: 1, maxResults: 1 });
    expect([first.values.map((p) => p.key), first.isLast, second.values.map((p) => p.key), second.isLast, second.total]).toEqual([['OPS'], false, ['SEC'], true, 2]);
  });

  it('pages a project through nextPageToken in updated order, with the security level of each issue', async () => {
    const { pages, issues } = await searchAll('project = SEC ORDER BY updated ASC, key ASC', 3);
    expect(pages).toBe(3);
    expect(issues.map((i) => i.key)).toEqual(['SEC-1', 'SEC-2', 'SEC-4', 'SEC-5', 'SEC-6', 'SEC-7', 'SEC-3']);
    expect(issues.map((i) => i.fields.security?.name ?? null)).toEqual([null, null, null, null, null, null, 'Incident responders']);
    expect(Object.keys(issues[0].fields).sort()).toEqual(['security', 'summary', 'updated']);
  });

  it('follows an updated-time cursor that is minute-granular, so the overlap re-reads the cursor minute', async () => {
    const { issues: all } = await searchAll('project = SEC ORDER BY updated ASC', 50);
    const cursor = all.at(-1)!.fields.updated!;
    fake.editIssue('SEC-5', 'Finding 5, edited');
    fake.addComment('SEC-1', 'acc-bob', 'Reproduced on staging');
    fake.deleteIssue('SEC-6');
    const minute = cursor.slice(0, 16).replace('T', ' ');
    const { issues: since } = await searchAll(`project = SEC AND updated >= "${minute}" ORDER BY updated ASC`, 50);
    expect(since.map((i) => [i.key, i.fields.summary])).toEqual([['SEC-3', 'Finding 3'], ['SEC-5', 'Finding 5, edited'], ['SEC-1', 'Finding 1']]);
    const comments = await jira.issueComments.getComments({ issueIdOrKey: 'SEC-1' });
    expect(comments.comments!.map((c) => [c.author?.accountId, c.body?.content?.[0]?.content?.[0]?.text])).toEqual([['acc-bob', 'Reproduced on staging']]);
    expect((await searchAll('project = SEC', 50)).issues.map((i) => i.key)).not.toContain('SEC-6');
  });

  it('hides a back-dated update from an updated-time query', async () => {
    const { issues } = await searchAll('project = SEC ORDER BY updated DESC', 50);
    const minute = issues[0].fields.updated!.slice(0, 16).replace('T', ' ');
    fake.editIssue('SEC-2', 'Imported with its original date', '2023-01-01T00:00:00.000+0000');
    const { issues: since } = await searchAll(`project = SEC AND updated >= "${minute}"`, 50);
    expect(since.map((i) => i.key)).not.toContain('SEC-2');
  });

  it('reads browse grants, security level members, group members and hidden emails', async () => {
    const scheme = await jira.projectPermissionSchemes.getAssignedPermissionScheme({ projectKeyOrId: 'SEC', expand: 'permissions' });
    expect(scheme.permissions).toEqual([expect.objectContaining({ permission: 'BROWSE_PROJECTS', holder: { type: 'group', parameter: 'engineering', value: 'grp-eng' } })]);
    const security = await jira.projectPermissionSchemes.getProjectIssueSecurityScheme({ projectKeyOrId: 'SEC' });
    expect(security.levels).toEqual([{ id: '10100', name: 'Incident responders' }]);
    const levelMembers = await jira.issueSecurityLevel.getIssueSecurityLevelMembers({ issueSecuritySchemeId: security.id!, issueSecurityLevelId: [10100] });
    expect(levelMembers.values!.map((m) => m.holder)).toEqual([{ type: 'user', parameter: 'acc-ada', value: 'acc-ada' }]);

    const firstPage = await jira.groups.getUsersFromGroup({ groupId: 'grp-eng', maxResults: 2 });
    const secondPage = await jira.groups.getUsersFromGroup({ groupId: 'grp-eng', startAt: 2, maxResults: 2 });
    const members = [...firstPage.values!, ...secondPage.values!];
    expect([firstPage.isLast, secondPage.isLast]).toEqual([false, true]);
    expect(members.map((u) => [u.accountId, u.emailAddress])).toEqual([['acc-ada', 'ada@example.test'], ['acc-bob', 'bob@example.test'], ['acc-eve', undefined]]);
  });

  it('reads a project role with its actors in the project, as users by account id and groups by id, and a role change', async () => {
    fake.addUser({ accountId: 'acc-cy', displayName: 'Cy', emailAddress: 'cy@example.test', active: false });
    fake.addProjectRole('10002', 'Developers');
    fake.setRoleActors('SEC', '10002', [{ type: 'user', value: 'acc-eve' }, { type: 'group', value: 'grp-eng' }, { type: 'user', value: 'acc-cy' }]);
    fake.setBrowse('SEC', [{ type: 'projectRole', value: '10002' }]);
    const scheme = await jira.projectPermissionSchemes.getAssignedPermissionScheme({ projectKeyOrId: 'SEC', expand: 'permissions,user,group' });
    expect(scheme.permissions!.map((p) => p.holder)).toEqual([{ type: 'projectRole', parameter: '10002', value: '10002' }]);

    const role = await jira.projectRoles.getProjectRole({ projectIdOrKey: 'SEC', id: 10002 });
    expect([role.id, role.name, role.self]).toEqual([10002, 'Developers', '/rest/api/3/project/SEC/role/10002']);
    // sorted by display name; a user actor carries its account id only, never an email
    expect(role.actors).toEqual([
      { id: 100022, displayName: 'Cy', type: 'atlassian-user-role-actor', actorUser: { accountId: 'acc-cy' } },
      { id: 100021, displayName: 'engineering', type: 'atlassian-group-role-actor', name: 'engineering', actorGroup: { displayName: 'engineering', name: 'engineering', groupId: 'grp-eng' } },
      { id: 100020, displayName: 'Eve', type: 'atlassian-user-role-actor', actorUser: { accountId: 'acc-eve' } },
    ]);
    const active = await jira.projectRoles.getProjectRole({ projectIdOrKey: 'SEC', id: 10002, excludeInactiveUsers: true });
    expect(active.actors!.map((a) => a.displayName)).toEqual(['engineering', 'Eve']);
    // the same role in another project has that project's actors (none yet)
    expect((await jira.projectRoles.getProjectRole({ projectIdOrKey: 'OPS', id: 10002 })).actors).toEqual([]);

    const before = await searchAll('project = SEC ORDER BY updated ASC', 50);
    fake.setRoleActors('SEC', '10002', [{ type: 'user', value: 'acc-ada' }]);
    expect((await jira.projectRoles.getProjectRole({ projectIdOrKey: 'SEC', id: 10002 })).actors!.map((a) => a.actorUser?.accountId)).toEqual(['acc-ada']);
    expect((await searchAll('project = SEC ORDER BY updated ASC', 50)).issues.map((i) => i.fields.updated)).toEqual(before.issues.map((i) => i.fields.updated));

    const missing = (await jira.projectRoles.getProjectRole({ projectIdOrKey: 'SEC', id: 10999 }).catch((e: unknown) => e)) as HttpException;
    expect(missing.status).toBe(404);
    // group members: a deactivated user is left out unless asked for
    fake.addGroupMember('grp-eng', 'acc-cy');
    expect((await jira.groups.getUsersFromGroup({ groupId: 'grp-eng', includeInactiveUsers: false })).values!.map((u) => u.accountId)).toEqual(['acc-ada', 'acc-bob', 'acc-eve']);
    expect((await jira.groups.getUsersFromGroup({ groupId: 'grp-eng', includeInactiveUsers: true })).values!.map((u) => [u.accountId, u.active])).toEqual([['acc-ada', true], ['acc-bob', true], ['acc-eve', true], ['acc-cy', false]]);
  });

  it('changes browse grants without moving any issue: only a sweep of the scheme sees it', async () => {
    const before = await searchAll('project = SEC ORDER BY updated ASC', 50);
    fake.setBrowse('SEC', [{ type: 'user', value: 'acc-ada' }]);
    const after = await searchAll('project = SEC ORDER BY updated ASC', 50);
    expect(after.issues.map((i) => i.fields.updated)).toEqual(before.issues.map((i) => i.fields.updated));
    const scheme = await jira.projectPermissionSchemes.getAssignedPermissionScheme({ projectKeyOrId: 'SEC', expand: 'permissions' });
    expect(scheme.permissions!.map((p) => p.holder)).toEqual([{ type: 'user', parameter: 'acc-ada', value: 'acc-ada' }]);
  });

  it('reads JQL dates in the account\'s time zone, and filters by security level and by key', async () => {
    fake.timeZone = 'Asia/Kolkata';
    expect((await jira.myself.getCurrentUser()).timeZone).toBe('Asia/Kolkata');
    const { issues: all } = await searchAll('project = SEC ORDER BY updated ASC', 50);
    const last = Date.parse(all.at(-1)!.fields.updated!.replace('+0000', 'Z'));
    // 5 h 30 ahead of UTC: the minute of the last update, written in Kolkata's wall clock
    const local = new Date(Math.floor(last / 60_000) * 60_000 + 330 * 60_000).toISOString().slice(0, 16).replace('T', ' ');
    expect((await searchAll(`project = SEC AND updated >= "${local}"`, 50)).issues.map((i) => i.key)).toEqual(['SEC-3']);
    expect((await searchAll('project = SEC AND level in (10100) ORDER BY key ASC', 50)).issues.map((i) => i.key)).toEqual(['SEC-3']);
    expect((await searchAll('project = SEC AND key > "SEC-5" ORDER BY key ASC', 50)).issues.map((i) => i.key)).toEqual(['SEC-6', 'SEC-7']);
    const unknown = (await searchAll('project = NOPE', 50).catch((e: unknown) => e)) as HttpException;
    expect(unknown.status).toBe(400);
  });

  it('throttles a matching request with the X-RateLimit-Reset it is given', async () => {
    const until = new Date('2031-01-01T01:10:00.000Z');
    fake.throttleMatching((url) => url.startsWith('/rest/api/3/search/jql'), 1, until);
    await searchAll('project = SEC', 50);
    const error = (await searchAll('project = SEC', 50).catch((e: unknown) => e)) as HttpException;
    expect(error.status).toBe(429);
    expect((error.cause as { response: { headers: Record<string, string> } }).response.headers['x-ratelimit-reset']).toBe(until.toISOString());
    expect((await searchAll('project = SEC', 50)).issues).toHaveLength(7);
  });

  it('surfaces 429 as an HttpException carrying Retry-After: jira.js does not retry', async () => {
    fake.switches.rateLimitNext(1, 12);
    const error = (await jira.myself.getCurrentUser().catch((e: unknown) => e)) as HttpException;
    expect(error).toBeInstanceOf(HttpException);
    expect(error.status).toBe(429);
    expect((error.cause as { response: { headers: Record<string, string> } }).response.headers['retry-after']).toBe('12');
  });

  it('surfaces each 5xx of a burst as an HttpException, so the connector retries, and answers after the burst', async () => {
    fake.switches.failNext(2, 503);
    const statuses: number[] = [];
    for (;;) {
      try {
        await jira.myself.getCurrentUser();
        break;
      } catch (error) {
        statuses.push((error as HttpException).status);
      }
    }
    expect(statuses).toEqual([503, 503]);
    expect(fake.switches.requests).toHaveLength(3);
  });

  it('fails with 401 when the API token is revoked mid-sync', async () => {
    fake.switches.afterRequests(1, () => fake.switches.revokeToken(fake.credential));
    const error = (await searchAll('project = SEC', 2).catch((e: unknown) => e)) as HttpException;
    expect(error.status).toBe(401);
    expect(fake.switches.requests).toHaveLength(2);
  });
});
