import { configFromEnv } from '@crs/config';
import * as tokens from '@crs/platform/tokens';
import type { RunningFake } from '../fakes/loopback-server';
import type { SlackFake } from '../fakes/slack/slack-fake';
import { startTestApp, type TestApp } from '../support/test-app';
import { BOT_USER, ENRIQUE, HAMZA, HARRY, HERMIONE, SAILOR, slackProviderFor, startSlackFake, TEAM, WORKSPACE_GROUP } from './slack-fixture';

/**
 * A Slack connector end to end through the API: the real export (two public channels, 158 messages) served by the fake
 * Web API, created, discovered and configured through HTTP, synced by the app's own scheduler and sync engine, and
 * retrieved through POST /query with callers' `acl` principals; then a private channel whose membership changes at the
 * source, and a member whose email Slack hides.
 */
const LEADS = 'G0LEADS001';
const OKAPI = 'The okapi budget for the third quarter is frozen until the audit ends.';

describe('a Slack connector through the API', () => {
  let fake: SlackFake;
  let server: RunningFake;
  let t: TestApp;
  let connectorId: string;

  const status = async () => (await t.request('GET', `/connectors/${connectorId}/status`)).body.data;
  /** Waits until the resources (all, or those named) have completed a sync that ended after `after`. */
  const untilSynced = async (after: Date, only?: string[]) => {
    for (let i = 0; i < 600; i++) {
      const s = await status();
      const waited = s.resources.filter((r: any) => !only || only.includes(r.resource_id));
      if (waited.every((r: any) => r.last_sync && r.last_sync.outcome === 'completed' && new Date(r.last_sync.ended_at) >= after) && s.lifecycle === 'active') return s;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`not synced: ${JSON.stringify(await status())}`);
  };
  const untilSearchable = async () => {
    for (let i = 0; i < 600; i++) {
      const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE connector_id = $1 AND status NOT IN ('graph_creation', 'completed')`, [connectorId]);
      if (n === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('synced messages did not become searchable');
  };
  const syncNow = async () => {
    const at = new Date();
    expect((await t.request('POST', `/connectors/${connectorId}/sync`)).status).toBe(202);
    await untilSynced(at);
    await untilSearchable();
  };
  const chunks = async (query: string, acl?: string[]) => {
    const res = await t.request('POST', '/query', { body: { database: 'chat', query, type: 'knowledge', query_apps: true, max_results: 20, ...(acl ? { acl } : {}) } });
    expect(res.status).toBe(200);
    return res.body.data.chunks as any[];
  };
  const finds = async (query: string, pattern: RegExp, acl?: string[]) => (await chunks(query, acl)).some((c) => pattern.test(c.chunk_content));
  const okapi = (acl: string[]) => finds('okapi budget third quarter audit', /okapi budget/, acl);
  const itemEvents = async () => (await t.store.readAll({ maxCount: 100_000 })).filter((e) => e.type === 'ItemIngested' || e.type === 'ItemDeleted').length;

  beforeAll(async () => {
    ({ fake, server } = await startSlackFake());
    fake.addChannel({ id: LEADS, name: 'leads', is_private: true, created: 1459500000 }, [HARRY, BOT_USER], [{ type: 'message', ts: '1459500100.000001', user: HARRY, text: OKAPI }]);
    t = await startTestApp('slack_connector', { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true, pollMs: 50 } });
    t.get(tokens.CONNECTOR_PROVIDERS).register(slackProviderFor(server));
    await t.createDatabase('chat');
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await fake?.stop();
  });

  it('syncs the real export: 158 messages, a known one retrieved through POST /query by workspace members only', async () => {
    const described = await t.request('GET', '/connectors/providers?id=slack');
    expect(described.status).toBe(200);
    expect(described.body.data.providers).toEqual([
      expect.objectContaining({
        id: 'slack',
        credential_fields: [expect.objectContaining({ name: 'bot_token', required: true, secret: true })],
        filterable_fields: ['channel', 'author', 'message_type', 'posted_at', 'reply_count'].map((name) => expect.objectContaining({ name })),
        resource_options: [expect.objectContaining({ name: 'look_back_days' }), expect.objectContaining({ name: 'page_size' })],
        captures_permissions: true,
      }),
    ]);

    const created = await t.request('POST', '/connectors', { body: { provider: 'slack', database: 'chat', credentials: { bot_token: fake.token } } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ provider: 'slack', provider_account_scope: TEAM, credentials: { bot_token: '***' }, account: { display_name: 'crs-bot in fake-workspace', warnings: [] } });
    expect(JSON.stringify(created.body)).not.toContain(fake.token);
    connectorId = created.body.data.connector_id;

    const discovered = await t.request('GET', `/connectors/${connectorId}/discover`);
    expect(discovered.body.data.resources.map((r: any) => [r.resource_id, r.name, r.details.access])).toEqual([
      [ENRIQUE, 'enrique', 'workspace'],
      [SAILOR, 'traveling-sailor', 'workspace'],
      [LEADS, 'leads', 'members'],
    ]);

    const before = new Date();
    const configured = await t.request('POST', `/connectors/${connectorId}/configure`, {
      body: { resources: [{ resource_id: ENRIQUE, resource_type: 'channel', name: 'enrique' }, { resource_id: SAILOR, resource_type: 'channel', name: 'traveling-sailor' }] },
    });
    expect(configured.status).toBe(200);
    expect(await untilSynced(before)).toMatchObject({ status: 'healthy', lifecycle: 'active' });
    await untilSearchable();
    const counts = await t.ds.query(`SELECT resource_id, count(*)::int AS n FROM rm_items WHERE connector_id = $1 GROUP BY resource_id ORDER BY resource_id`, [connectorId]);
    expect(counts).toEqual([{ resource_id: ENRIQUE, n: 102 }, { resource_id: SAILOR, n: 56 }]);

    const question = 'is simulated annealing a bad metaheuristic to parallelize';
    const hit = (await chunks(question, ['harry@example.test', WORKSPACE_GROUP])).find((c) => /SA is just a bad metaheuristic/.test(c.chunk_content));
    expect(hit).toBeDefined();
    expect(hit.metadata).toMatchObject({ connector_id: connectorId, provider: 'slack', channel_id: ENRIQUE, ts: '1458211102.000009', author: HAMZA });
    expect(hit.additional_metadata).toMatchObject({ connector_id: connectorId, resource_id: ENRIQUE, channel: ENRIQUE, author: HAMZA, message_type: 'message', reply_count: 0 });
    // a public channel is the workspace's: a caller who does not declare the workspace group does not see it
    expect(await finds(question, /SA is just a bad metaheuristic/, ['stranger@elsewhere.test'])).toBe(false);
    expect(await finds(question, /SA is just a bad metaheuristic/, ['harry@example.test'])).toBe(false);
  });

  it('an unchanged resync makes three API calls per channel and appends no item event', async () => {
    const events = await itemEvents();
    const from = fake.switches.requests.length;
    await syncNow();
    expect(fake.switches.requests.slice(from).sort()).toEqual([
      'POST /api/conversations.history',
      'POST /api/conversations.history',
      'POST /api/conversations.history',
      'POST /api/conversations.history',
      'POST /api/conversations.info',
      'POST /api/conversations.info',
    ]);
    expect(await itemEvents()).toBe(events);
  });

  it("a private channel's members retrieve it; a new member can once the next sync has run, and not before", async () => {
    const before = new Date();
    const added = await t.request('POST', `/connectors/${connectorId}/resources`, { body: { resource_id: LEADS, resource_type: 'channel', name: 'leads' } });
    expect(added.status).toBe(200);
    await untilSynced(before, [LEADS]);
    await untilSearchable();
    expect(await okapi(['harry@example.test'])).toBe(true);
    expect(await okapi(['hermione@example.test', WORKSPACE_GROUP])).toBe(false);

    fake.addMember(LEADS, HERMIONE);
    expect(await okapi(['hermione@example.test'])).toBe(false);
    await syncNow();
    expect(await okapi(['hermione@example.test'])).toBe(true);
  });

  it('a member removed at the source keeps access until the next sync, and loses it then', async () => {
    fake.removeMember(LEADS, HARRY);
    expect(await okapi(['harry@example.test'])).toBe(true);
    await syncNow();
    expect(await okapi(['harry@example.test'])).toBe(false);
    expect(await okapi(['hermione@example.test'])).toBe(true);
  });

  it("a member whose email Slack hides makes the resource's rule govern, until the channel's members can all be named again", async () => {
    // the captured members win over a rule set through the API (rule 12)
    const patched = await t.request('PATCH', `/connectors/${connectorId}/resources/${LEADS}`, { body: { acl: ['harry@example.test'] } });
    expect(patched.status).toBe(200);
    expect(await okapi(['harry@example.test'])).toBe(false);
    expect(await okapi(['hermione@example.test'])).toBe(true);

    fake.addMember(LEADS, HAMZA);
    await syncNow();
    expect(await okapi(['harry@example.test'])).toBe(true);
    expect(await okapi(['hermione@example.test'])).toBe(false);
    expect(await okapi(['stranger@elsewhere.test', WORKSPACE_GROUP])).toBe(false);

    fake.removeMember(LEADS, HAMZA);
    await syncNow();
    expect(await okapi(['harry@example.test'])).toBe(false);
    expect(await okapi(['hermione@example.test'])).toBe(true);
    expect((await status()).status).toBe('healthy');
  });
});
