import { configFromEnv } from '@crs/config';
import { startTestApp, type TestApp } from '../support/test-app';
import { JiraFake } from '../fakes/jira/jira-fake';
import type { RunningFake } from '../fakes/loopback-server';

/**
 * Jira permissions end to end through HTTP: a connector created, configured and synced through the API against the
 * Jira fake, and what each caller retrieves through `POST /query` with `acl` principals. An issue with a security
 * level is hidden from project members outside the level; a change of browse access, of a level's members, or of the
 * actors of a project role holding browse access, applies on the next sync and not before.
 */
describe('jira connector: who retrieves which issue', () => {
  let t: TestApp;
  let fake: JiraFake;
  let server: RunningFake;
  let connectorId: string;

  const ADA = 'ada@corp.test';
  const BOB = 'bob@corp.test';
  const CY = 'cy@corp.test';

  const status = async () => (await t.request('GET', `/connectors/${connectorId}/status`)).body.data;
  const untilSynced = async (after: Date) => {
    for (let i = 0; i < 600; i++) {
      const s = await status();
      if (s.resources.every((r: any) => r.last_sync?.outcome === 'completed' && new Date(r.last_sync.ended_at) >= after) && s.lifecycle === 'active') return s;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`not synced: ${JSON.stringify(await status())}`);
  };
  const searchable = async () => {
    for (let i = 0; i < 600; i++) {
      const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE connector_id = $1 AND status NOT IN ('graph_creation', 'completed')`, [connectorId]);
      if (n === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('synced issues did not become searchable');
  };
  const syncNow = async () => {
    const at = new Date();
    expect((await t.request('POST', `/connectors/${connectorId}/sync`)).status).toBe(202);
    await untilSynced(at);
    await searchable();
  };
  /** The issue keys a caller retrieves for the words every issue holds. */
  const retrieves = async (caller: string): Promise<string[]> => {
    const res = await t.request('POST', '/query', { body: { database: 'tracker', query: 'quarterly harbour audit', query_by: 'text', type: 'knowledge', max_results: 20, acl: [caller] } });
    expect(res.status).toBe(200);
    return [...new Set<string>(res.body.data.chunks.map((c: any) => c.additional_metadata.issue_key))].sort();
  };

  beforeAll(async () => {
    fake = new JiraFake();
    fake.addUser({ accountId: 'acc-ada', displayName: 'Ada', emailAddress: ADA });
    fake.addUser({ accountId: 'acc-bob', displayName: 'Bob', emailAddress: BOB });
    fake.addUser({ accountId: 'acc-cy', displayName: 'Cy', emailAddress: CY });
    fake.addGroup('grp-eng', 'engineering', ['acc-ada', 'acc-bob']);
    fake.addProject('OPS', 'Operations', [{ type: 'group', value: 'grp-eng' }], [{ id: '10100', name: 'Responders', holders: [{ type: 'user', value: 'acc-ada' }] }]);
    fake.addIssue('OPS', 'Quarterly harbour audit: open findings', { description: 'The quarterly harbour audit lists the open findings.', reporter: 'acc-bob' });
    fake.addIssue('OPS', 'Quarterly harbour audit: breach', { description: 'The quarterly harbour audit found a breach.', reporter: 'acc-ada', securityLevelId: '10100' });
    server = await fake.start();
    t = await startTestApp('jira_acl', { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true, pollMs: 50 } });
    await t.createDatabase('tracker');
    const created = await t.request('POST', '/connectors', { body: { provider: 'jira', database: 'tracker', credentials: { base_url: server.url, email: fake.credentials.email, api_token: fake.credentials.apiToken } } });
    expect(created.status).toBe(201);
    connectorId = created.body.data.connector_id;
    expect(JSON.stringify(created.body)).not.toContain(fake.credentials.apiToken);
    const at = new Date();
    const configured = await t.request('POST', `/connectors/${connectorId}/configure`, { body: { resources: [{ resource_id: 'OPS', resource_type: 'project', name: 'Operations' }] } });
    expect(configured.status).toBe(200);
    await untilSynced(at);
    await searchable();
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await fake?.stop();
  });

  it('an issue with a security level is hidden from project members outside the level', async () => {
    expect(await retrieves(ADA)).toEqual(['OPS-1', 'OPS-2']);
    expect(await retrieves(BOB)).toEqual(['OPS-1']);
    expect(await retrieves(CY)).toEqual([]);
  });

  it('a change of browse access applies on the next sync, not before', async () => {
    fake.setBrowse('OPS', [{ type: 'group', value: 'grp-eng' }, { type: 'user', value: 'acc-cy' }]);
    expect(await retrieves(CY)).toEqual([]);
    await syncNow();
    expect(await retrieves(CY)).toEqual(['OPS-1']);
    fake.setBrowse('OPS', [{ type: 'user', value: 'acc-cy' }]);
    expect(await retrieves(BOB)).toEqual(['OPS-1']);
    await syncNow();
    expect(await retrieves(BOB)).toEqual([]);
    expect(await retrieves(CY)).toEqual(['OPS-1']);
    // Ada is still in the level but may no longer browse the project: Jira hides the issue from her, and so does this
    expect(await retrieves(ADA)).toEqual([]);
  });

  it('a change of a level\'s members applies on the next sync, without a new version of the issue', async () => {
    fake.setBrowse('OPS', [{ type: 'group', value: 'grp-eng' }, { type: 'user', value: 'acc-cy' }]);
    fake.setSecurityLevelHolders('OPS', '10100', [{ type: 'user', value: 'acc-ada' }, { type: 'user', value: 'acc-cy' }]);
    const versions = async () => (await t.ds.query(`SELECT content_version FROM rm_items WHERE connector_id = $1 ORDER BY item_id`, [connectorId])).map((r: any) => r.content_version);
    const before = await versions();
    expect(await retrieves(CY)).toEqual(['OPS-1']);
    await syncNow();
    expect(await retrieves(CY)).toEqual(['OPS-1', 'OPS-2']);
    expect(await retrieves(ADA)).toEqual(['OPS-1', 'OPS-2']);
    expect(await retrieves(BOB)).toEqual(['OPS-1']);
    expect(await versions()).toEqual(before);
  });

  it('browse access with a hidden email closes the project\'s issues until the resource has an acl, and the status says why', async () => {
    fake.addUser({ accountId: 'acc-hid', displayName: 'Hidden' });
    fake.setBrowse('OPS', [{ type: 'group', value: 'grp-eng' }, { type: 'user', value: 'acc-hid' }]);
    await syncNow();
    const [resource] = (await status()).resources;
    expect(resource).toMatchObject({ status: 'healthy', status_reason: '1 members at the source could not be resolved to an email; no acl rule is set on the resource, so its documents are closed to every caller until one is' });
    expect(await retrieves(BOB)).toEqual([]);
    expect((await t.request('PATCH', `/connectors/${connectorId}/resources/OPS`, { body: { acl: [BOB] } })).status).toBe(200);
    expect(await retrieves(BOB)).toEqual(['OPS-1']);
    // the issue with a level keeps its own permission, whatever the resource's rule: Ada is in the level and may
    // browse; Cy is in the level but may no longer browse the project
    expect(await retrieves(ADA)).toEqual(['OPS-2']);
    expect(await retrieves(CY)).toEqual([]);
  });

  it('a member added to a project role holding browse access retrieves the project\'s issues after the next sync, not before', async () => {
    fake.addProjectRole('10002', 'Developers');
    fake.setRoleActors('OPS', '10002', [{ type: 'group', value: 'grp-eng' }]);
    fake.setBrowse('OPS', [{ type: 'projectRole', value: '10002' }]);
    fake.setSecurityLevelHolders('OPS', '10100', [{ type: 'user', value: 'acc-ada' }, { type: 'user', value: 'acc-cy' }]);
    await syncNow();
    const [resource] = (await status()).resources;
    expect([resource.status, resource.status_reason]).toEqual(['healthy', null]);
    expect(await retrieves(CY)).toEqual([]);
    expect(await retrieves(BOB)).toEqual(['OPS-1']);
    fake.setRoleActors('OPS', '10002', [{ type: 'group', value: 'grp-eng' }, { type: 'user', value: 'acc-cy' }]);
    expect(await retrieves(CY)).toEqual([]);
    await syncNow();
    // Cy may browse now: the project's issues, and the one whose level names Cy
    expect(await retrieves(CY)).toEqual(['OPS-1', 'OPS-2']);
    expect(await retrieves(BOB)).toEqual(['OPS-1']);
    expect(await retrieves(ADA)).toEqual(['OPS-1', 'OPS-2']);
  });
});
