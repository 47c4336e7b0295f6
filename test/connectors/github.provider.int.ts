import { configFromEnv } from '@crs/config';
import { GitHubProvider } from '@crs/connectors/providers/github/github.provider';
import * as tokens from '@crs/platform/tokens';
import { startTestApp, type TestApp } from '../support/test-app';
import type { RunningFake } from '../fakes/loopback-server';
import { GitHubFake, type GitHubCollaborator } from '../fakes/github/github-fake';

/**
 * A GitHub connector through HTTP only (create, discover, configure, sync now, POST /query with `acl` principals),
 * with the app's scheduler and sync engine and the GitHub fake as the source: what a caller retrieves follows the
 * repository's visibility and collaborators as GitHub shows them at the last sync, and only from that sync on; a
 * collaborator whose email GitHub does not show leaves the resource's access rule to decide (rule 12).
 */
const ORG = 'octokit-fixture-org';
const REPOSITORY = `${ORG}/hello-world`;

describe('a GitHub connector: permissions at the source reach retrieval on the next sync', () => {
  let t: TestApp;
  let fake: GitHubFake;
  let server: RunningFake;
  let connectorId: string;

  const status = async () => (await t.request('GET', `/connectors/${connectorId}/status`)).body.data;
  const untilSynced = async (after: Date) => {
    for (let i = 0; i < 400; i++) {
      const s = await status();
      if (s.resources.every((r: any) => r.last_sync?.outcome === 'completed' && new Date(r.last_sync.ended_at) >= after) && s.lifecycle === 'active') return s;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`not synced: ${JSON.stringify(await status())}`);
  };
  const searchable = async () => {
    for (let i = 0; i < 400; i++) {
      const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE connector_id = $1 AND status NOT IN ('graph_creation', 'completed')`, [connectorId]);
      if (n === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('synced items did not become searchable');
  };
  const syncNow = async () => {
    const at = new Date();
    expect((await t.request('POST', `/connectors/${connectorId}/sync`)).status).toBe(202);
    const s = await untilSynced(at);
    await searchable();
    return s;
  };
  /** Which of the repository's documents a caller with this email retrieves for the words of the plan. */
  const retrieves = async (email: string) => {
    const res = await t.request('POST', '/query', { body: { query: 'quillwort planting plan', database: 'gh', type: 'knowledge', max_results: 20, query_apps: true, acl: [email] } });
    expect(res.status).toBe(200);
    return [...new Set((res.body.data.chunks as any[]).filter((c) => /quillwort/i.test(c.chunk_content)).map((c) => c.additional_metadata.path ?? `#${c.metadata.number}`))].sort();
  };
  const itemEvents = async () => (await t.store.readAll({ maxCount: 100_000 })).filter((e) => e.type === 'ItemIngested' || e.type === 'ItemDeleted').length;
  const collaborator = (login: string, id: number): GitHubCollaborator => ({ ...fake.recordedCollaborators[0], login, id, role_name: 'write' });
  const EVERY_DOCUMENT = ['#1', 'docs/plan.md'];

  beforeAll(async () => {
    fake = new GitHubFake();
    fake.loadOctokitFixtures();
    fake.writeFile(REPOSITORY, 'docs/plan.md', '# Planting plan\nThe quillwort beds go in the north pond in March.\n');
    fake.addIssue(REPOSITORY, { number: 1, title: 'Quillwort seedlings', body: 'Order quillwort seedlings for the planting plan.', created_at: '2024-02-01T00:00:00Z', updated_at: '2024-02-01T00:00:00Z' });
    for (const [login, id] of [['ada', 701], ['bob', 702], ['carol', 703], ['dave', 704]] as const) fake.addUser(collaborator(login, id), `${login}@example.com`);
    server = await fake.start();
    t = await startTestApp('github_conn', { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true, pollMs: 50 } });
    t.get(tokens.CONNECTOR_PROVIDERS).register(new GitHubProvider({ apiUrl: server.url, allowPrivateNetworks: true, retryBaseMs: 5 }));
    await t.createDatabase('gh');
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await fake?.stop();
  });

  it('create, discover and configure through the API: a public repository is retrieved by anyone', async () => {
    const created = await t.request('POST', '/connectors', { body: { provider: 'github', database: 'gh', credentials: { token: fake.token } } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ provider: 'github', provider_account_scope: 'github.com/crs-connector', credentials: { token: '***' } });
    expect(JSON.stringify(created.body)).not.toContain(fake.token);
    connectorId = created.body.data.connector_id;
    const discovered = (await t.request('GET', `/connectors/${connectorId}/discover`)).body.data.resources;
    expect(discovered.map((r: any) => [r.resource_id, r.details.visibility])).toEqual([[REPOSITORY, 'public'], [`${ORG}/paginate-issues`, 'public']]);

    const before = new Date();
    const configured = await t.request('POST', `/connectors/${connectorId}/configure`, { body: { resources: [{ resource_id: REPOSITORY, resource_type: 'repository', name: 'Hello world' }] } });
    expect(configured.status).toBe(200);
    expect(await untilSynced(before)).toMatchObject({ status: 'healthy' });
    await searchable();
    expect(await retrieves('stranger@else.org')).toEqual(EVERY_DOCUMENT);
  });

  it('made private with two collaborators: nothing changes before the next sync; after it, only they retrieve it, with no new item event', async () => {
    const events = await itemEvents();
    fake.setVisibility(REPOSITORY, 'private');
    fake.addCollaborator(REPOSITORY, collaborator('ada', 701));
    fake.addCollaborator(REPOSITORY, collaborator('bob', 702));
    expect(await retrieves('stranger@else.org')).toEqual(EVERY_DOCUMENT);
    await syncNow();
    expect(await retrieves('stranger@else.org')).toEqual([]);
    expect(await retrieves('ada@example.com')).toEqual(EVERY_DOCUMENT);
    expect(await retrieves('bob@example.com')).toEqual(EVERY_DOCUMENT);
    expect(await itemEvents()).toBe(events);
  });

  it('a collaborator added and one removed apply on the next sync, and not before', async () => {
    fake.addCollaborator(REPOSITORY, collaborator('carol', 703));
    fake.removeCollaborator(REPOSITORY, 'bob');
    expect(await retrieves('carol@example.com')).toEqual([]);
    expect(await retrieves('bob@example.com')).toEqual(EVERY_DOCUMENT);
    await syncNow();
    expect(await retrieves('carol@example.com')).toEqual(EVERY_DOCUMENT);
    expect(await retrieves('bob@example.com')).toEqual([]);
  });

  it('a collaborator without a public email: the capture says nothing and the resource rule governs', async () => {
    fake.setPublicEmail('dave', null);
    fake.addCollaborator(REPOSITORY, collaborator('dave', 704));
    const patched = await t.request('PATCH', `/connectors/${connectorId}/resources/${encodeURIComponent(REPOSITORY)}`, { body: { acl: ['ada@example.com', 'dave@corp.example'] } });
    expect(patched.status).toBe(200);
    // until the next sync the captured collaborators still decide (the provider's verdict wins over the API rule)
    expect(await retrieves('dave@corp.example')).toEqual([]);
    expect(await retrieves('carol@example.com')).toEqual(EVERY_DOCUMENT);
    await syncNow();
    expect(await retrieves('dave@corp.example')).toEqual(EVERY_DOCUMENT);
    expect(await retrieves('ada@example.com')).toEqual(EVERY_DOCUMENT);
    expect(await retrieves('carol@example.com')).toEqual([]);
    expect(await retrieves('stranger@else.org')).toEqual([]);
  });

  it('made public again: the public verdict does not override the API rule on the resource (rule 12)', async () => {
    fake.setVisibility(REPOSITORY, 'public');
    await syncNow();
    expect(await retrieves('stranger@else.org')).toEqual([]);
    expect(await retrieves('ada@example.com')).toEqual(EVERY_DOCUMENT);
    await t.request('PATCH', `/connectors/${connectorId}/resources/${encodeURIComponent(REPOSITORY)}`, { body: { acl: ['__public__'] } });
    expect(await retrieves('stranger@else.org')).toEqual(EVERY_DOCUMENT);
  });
});
