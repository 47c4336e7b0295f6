import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { configFromEnv } from '@crs/config';
import { streams } from '@crs/domain/streams';
import { CONNECTOR_CREDENTIALS, CONNECTOR_SCHEDULER } from '@crs/platform/tokens';
import { createTestDatabase } from '../support/test-database';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The /connectors routes through HTTP, against the real database provider: a source database on the run's embedded
 * Postgres with a table, read by a role that may only SELECT, whose connection string is the connector's credentials.
 * The app runs with CONNECTOR_ALLOW_PRIVATE_NETWORKS on (the source listens on 127.0.0.1); the last suite runs one
 * with it off and proves the refusal.
 */
const ROLE = `crs_conn_${randomBytes(3).toString('hex')}`;
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;
const NEW_PASSWORD = `pw2-${randomBytes(12).toString('hex')}`;

let sourceUrl: string;
let admin: Client;

function urlFor(user: string, password: string, host?: string): string {
  const u = new URL(sourceUrl);
  u.username = user;
  u.password = password;
  if (host) u.hostname = host;
  return u.toString();
}

async function createSource(): Promise<void> {
  sourceUrl = await createTestDatabase('conn_source');
  admin = new Client({ connectionString: sourceUrl });
  await admin.connect();
  await admin.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
  await admin.query(`CREATE TABLE public.orders (id int PRIMARY KEY, title text, body text, updated_at timestamptz)`);
  await admin.query(`INSERT INTO public.orders SELECT i, 'Order ' || i, 'Two kestrels ordered ' || i, now() FROM generate_series(1, 3) i`);
  await admin.query(`CREATE TABLE public.customers (id int PRIMARY KEY, name text)`);
  await admin.query(`GRANT USAGE ON SCHEMA public TO ${ROLE}`);
  await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${ROLE}`);
}

describe('the /connectors routes', () => {
  let t: TestApp;
  /** Every raw response body of the suite, to prove no credential ever left the service. */
  const bodies: string[] = [];
  let connectorId: string;

  const req: TestApp['request'] = async (method, url, opts) => {
    const res = await t.request(method, url, opts);
    bodies.push(res.raw);
    return res;
  };
  const create = (extra: Record<string, unknown> = {}) => req('POST', '/connectors', { body: { provider: 'postgres', database: 'shop', credentials: { connection_string: urlFor(ROLE, PASSWORD) }, ...extra } });
  const get = async (id = connectorId) => (await req('GET', `/connectors/${id}`)).body;
  const resources = async (id = connectorId) => (await req('GET', `/connectors/${id}/resources`)).body.data.resources as any[];
  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(res.body).toMatchObject({ success: false, data: null });
  };
  const orders = (extra: Record<string, unknown> = {}) => ({ resource_id: 'public.orders', resource_type: 'table', name: 'Orders', ...extra });

  beforeAll(async () => {
    await createSource();
    t = await startTestApp('connectors_api', { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true } });
    // These tests are about what the routes record and request; the scheduler would take the requests and sync at
    // once. Syncing through these routes is proven in connectors-sync.e2e.ts.
    await t.get(CONNECTOR_SCHEDULER).stop();
    await t.createDatabase('shop', { metadata_schema: [{ name: 'team', type: 'string' }] });
    await t.createDatabase('other');
    const res = await create({ custom_instructions: 'Orders are in euros.' });
    expect(res.status).toBe(201);
    connectorId = res.body.data.connector_id;
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await admin?.query(`DROP OWNED BY ${ROLE}`).catch(() => undefined);
    await admin?.end();
  });

  it('GET /connectors/providers lists every provider; ?id= describes one; an unknown id is 404', async () => {
    const all = await req('GET', '/connectors/providers');
    expect(all.status).toBe(200);
    expect(all.body.data.providers.map((p: any) => p.id)).toEqual(['confluence', 'github', 'google_drive', 'jira', 'postgres', 'slack']);
    // The five source apps capture permissions (rule 11), each needs a secret, and each writes filterable fields.
    for (const p of all.body.data.providers.filter((x: any) => x.id !== 'postgres')) {
      expect([p.id, p.captures_permissions, p.credential_fields.some((f: any) => f.secret), p.filterable_fields.length > 0]).toEqual([p.id, true, true, true]);
    }
    const one = await req('GET', '/connectors/providers?id=postgres');
    expect(one.body.data.providers).toEqual([
      expect.objectContaining({
        id: 'postgres',
        credential_fields: [expect.objectContaining({ name: 'connection_string', required: true, secret: true })],
        filterable_fields: expect.arrayContaining([expect.objectContaining({ name: 'schema' }), expect.objectContaining({ name: 'table' })]),
        resource_options: expect.arrayContaining([expect.objectContaining({ name: 'id_columns' })]),
        captures_permissions: false,
      }),
    ]);
    expectError(await req('GET', '/connectors/providers?id=nope'), 404, 'PROVIDER_NOT_FOUND');
    expectError(await req('GET', '/connectors/providers?sort=name'), 400, 'INVALID_INPUT');
  });

  it('POST /connectors creates it: 201, credentials masked, the account scope from the credentials, lifecycle configuring', async () => {
    const c = await get();
    expect(c.data).toMatchObject({
      connector_id: connectorId,
      provider: 'postgres',
      database: 'shop',
      collection: 'default',
      custom_instructions: 'Orders are in euros.',
      sync_interval_seconds: 3600,
      credentials: { connection_string: '***' },
      status: 'healthy',
      lifecycle: 'configuring',
      paused: false,
      resource_count: 0,
      capture_permissions: true,
    });
    const u = new URL(sourceUrl);
    expect(c.data.provider_account_scope).toBe(`${u.hostname}:${u.port}${u.pathname}`);
    const scoped = await create({ collection: 'sales', provider_account_scope: 'shop-db-eu', sync_interval_seconds: 60, capture_permissions: false });
    expect(scoped.status).toBe(201);
    expect(scoped.body.data).toMatchObject({ collection: 'sales', provider_account_scope: 'shop-db-eu', sync_interval_seconds: 60, capture_permissions: false, account: { display_name: expect.stringContaining(ROLE), warnings: [] } });
    expect((await req('GET', '/connectors')).body.data.connectors.map((x: any) => x.connector_id)).toEqual(expect.arrayContaining([connectorId, scoped.body.data.connector_id]));
  });

  it('refuses bad creations with 400 (the provider named, fields named) and stores nothing', async () => {
    const before = (await req('GET', '/connectors')).body.data.connectors;
    const unknown = await create({ provider: 'gopher' });
    expectError(unknown, 400, 'INVALID_INPUT');
    expect(unknown.body.error.message).toMatch(/known providers: [a-z_, ]*\bpostgres\b/);
    expectError(await req('POST', '/connectors', { body: { provider: 'postgres', database: 'shop' } }), 400, 'INVALID_INPUT');
    expectError(await create({ credentials: { connection_string: urlFor(ROLE, PASSWORD), token: 'x' } }), 400, 'INVALID_INPUT');
    expectError(await create({ credentials: {} }), 400, 'INVALID_INPUT');
    expectError(await create({ surprise: true }), 400, 'INVALID_INPUT');
    expectError(await create({ custom_instructions: 'a'.repeat(4001) }), 400, 'INVALID_INPUT');
    expectError(await create({ sync_interval_seconds: 59 }), 400, 'INVALID_INPUT');
    expectError(await create({ capture_permissions: 'no' }), 400, 'INVALID_INPUT');
    expectError(await create({ database: 'nowhere' }), 404, 'DATABASE_NOT_FOUND');
    expectError(await create({ credentials: { connection_string: 'mysql://x@y/z' } }), 400, 'CONNECTOR_CONFIGURATION_INVALID');
    expect((await req('GET', '/connectors')).body.data.connectors).toEqual(before);
  });

  it('a wrong password is 422 CONNECTOR_CREDENTIALS_REFUSED with a message a person can act on, and nothing is stored', async () => {
    const vaultRows = async () => (await t.ds.query('SELECT count(*)::int AS n FROM connector_credentials'))[0].n;
    const rows = await vaultRows();
    const before = (await req('GET', '/connectors')).body.data.connectors;
    const res = await req('POST', '/connectors', { body: { provider: 'postgres', database: 'shop', credentials: { connection_string: urlFor(ROLE, 'wrong-password') } } });
    expectError(res, 422, 'CONNECTOR_CREDENTIALS_REFUSED');
    expect(res.body.error.message).toMatch(/refused the login of user "crs_conn_/);
    expect(res.body.error.message).not.toContain('wrong-password');
    expect(await vaultRows()).toBe(rows);
    expect((await req('GET', '/connectors')).body.data.connectors).toEqual(before);
  });

  it('GET /connectors/{id}/discover lists the tables the role can read', async () => {
    const res = await req('GET', `/connectors/${connectorId}/discover`);
    expect(res.status).toBe(200);
    const found = res.body.data.resources;
    expect(found).toEqual(expect.arrayContaining([expect.objectContaining({ resource_id: 'public.orders', resource_type: 'table', configured: false, details: expect.objectContaining({ key: ['id'] }) })]));
    expect(found.map((r: any) => r.resource_id)).toContain('public.customers');
  });

  it('configure activates resources: status shows lifecycle initial_sync, a sync is requested, discover marks them configured', async () => {
    const res = await req('POST', `/connectors/${connectorId}/configure`, {
      body: { resources: [orders({ custom_instructions: 'Amounts are net.', acl: ['Ann@Corp.io', ' ann@corp.io '], collection: 'orders', metadata: { team: 'sales' } }), { resource_id: 'public.customers', resource_type: 'table', name: 'Customers' }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ connector_id: connectorId, lifecycle: 'initial_sync', sync_requested: true });
    expect(res.body.data.resources[0]).toMatchObject({ resource_id: 'public.orders', collection: 'orders', acl: ['user_email:ann@corp.io'], custom_instructions: 'Amounts are net.', metadata: { team: 'sales' }, generation: 1, lifecycle: 'initial_sync' });
    const status = await req('GET', `/connectors/${connectorId}/status`);
    expect(status.body.data).toMatchObject({ connector_id: connectorId, status: 'healthy', lifecycle: 'initial_sync', paused: false });
    expect(status.body.data.resources.map((r: any) => [r.resource_id, r.lifecycle, r.status])).toEqual([
      ['public.customers', 'initial_sync', 'healthy'],
      ['public.orders', 'initial_sync', 'healthy'],
    ]);
    const requested = await t.ds.query('SELECT resource_id FROM connector_sync_requests WHERE connector_id = $1 ORDER BY resource_id', [connectorId]);
    expect(requested.map((r: any) => r.resource_id)).toEqual(['public.customers', 'public.orders']);
    const discovered = (await req('GET', `/connectors/${connectorId}/discover`)).body.data.resources;
    expect(discovered.find((r: any) => r.resource_id === 'public.orders').configured).toBe(true);
    // GET /resources: custom_instructions absent when inherited, present when the resource has its own.
    const list = await resources();
    const customers = list.find((r) => r.resource_id === 'public.customers');
    expect(customers).not.toHaveProperty('custom_instructions');
    expect(customers).toMatchObject({ effective_custom_instructions: 'Orders are in euros.', collection: 'default', acl: null });
    expect(list.find((r) => r.resource_id === 'public.orders')).toMatchObject({ custom_instructions: 'Amounts are net.', effective_custom_instructions: 'Amounts are net.' });
    expect((await get()).data).toMatchObject({ lifecycle: 'initial_sync', resource_count: 2 });
  });

  it('configure again (rule 2): resources not listed are untouched; a listed one keeps its instructions and access rule, and omitted fields are cleared', async () => {
    const before = await resources();
    const res = await req('POST', `/connectors/${connectorId}/configure`, { body: { resources: [orders({ name: 'All orders' })] } });
    expect(res.status).toBe(200);
    const after = await resources();
    expect(after.find((r) => r.resource_id === 'public.customers')).toEqual(before.find((r) => r.resource_id === 'public.customers'));
    expect(after.find((r) => r.resource_id === 'public.orders')).toMatchObject({ name: 'All orders', custom_instructions: 'Amounts are net.', acl: ['user_email:ann@corp.io'], collection: 'default', metadata: null, generation: 1 });
  });

  it('configure refuses the whole request when any resource is invalid (missing name, duplicate id, too long instructions), changing nothing', async () => {
    const before = await resources();
    const bad = [
      [orders({ name: 'Renamed' }), { resource_id: 'public.new', resource_type: 'table' }],
      [orders({ name: 'Renamed' }), orders({ name: 'Twice' })],
      [orders({ name: 'Renamed' }), { resource_id: 'public.new', resource_type: 'table', name: 'New', custom_instructions: 'x'.repeat(4001) }],
      [orders({ name: 'Renamed', acl: ['x'.repeat(300)] })],
      [orders({ name: 'Renamed', metadata: { colour: 'red' } })],
      [orders({ name: 'Renamed', surprise: 1 })],
      [],
    ];
    for (const list of bad) expectError(await req('POST', `/connectors/${connectorId}/configure`, { body: { resources: list } }), 400, 'INVALID_INPUT');
    expect(await resources()).toEqual(before);
  });

  it('custom_instructions: 4,000 characters with an emoji counted once is accepted, 4,001 is 400 and leaves the stored value', async () => {
    const exactly = '😀' + 'a'.repeat(3999);
    expect(exactly.length).toBe(4001); // UTF-16 units: a limit counted in units would refuse it
    const ok = await req('PATCH', `/connectors/${connectorId}`, { body: { custom_instructions: exactly } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.custom_instructions).toBe(exactly);
    const before = await get();
    const over = await req('PATCH', `/connectors/${connectorId}`, { body: { custom_instructions: exactly + 'a', sync_interval_seconds: 120 } });
    expectError(over, 400, 'INVALID_INPUT');
    expect(over.body.error.message).toMatch(/4001 characters/);
    expect(await get()).toMatchObject({ data: before.data });
    // The same on a resource.
    expect((await req('PATCH', `/connectors/${connectorId}/resources/public.orders`, { body: { custom_instructions: exactly } })).status).toBe(200);
    const resBefore = await resources();
    expectError(await req('PATCH', `/connectors/${connectorId}/resources/public.orders`, { body: { custom_instructions: exactly + 'a', acl: ['bob@corp.io'] } }), 400, 'INVALID_INPUT');
    expect(await resources()).toEqual(resBefore);
  });

  it('PATCH /connectors/{id} changes only what is sent; "" clears the instructions; bad values are 400 with nothing changed', async () => {
    const res = await req('PATCH', `/connectors/${connectorId}`, { body: { sync_interval_seconds: 900 } });
    expect(res.body.data).toMatchObject({ sync_interval_seconds: 900, custom_instructions: expect.stringMatching(/^😀a/) });
    const cleared = await req('PATCH', `/connectors/${connectorId}`, { body: { custom_instructions: '' } });
    expect(cleared.body.data).toMatchObject({ sync_interval_seconds: 900, custom_instructions: null });
    const before = await get();
    for (const body of [{ sync_interval_seconds: 30 }, { sync_interval_seconds: 3_000_000 }, { sync_interval_seconds: 'often' }, { custom_instructions: null }, { provider: 'x' }, { credentials: {} }, { capture_permissions: false }]) {
      expectError(await req('PATCH', `/connectors/${connectorId}`, { body }), 400, 'INVALID_INPUT');
    }
    expect(await get()).toMatchObject({ data: before.data });
    const empty = await req('PATCH', `/connectors/${connectorId}`, { body: {} });
    expect(empty.body.data).toEqual(before.data);
  });

  it('PATCH a resource: instructions "" returns to the connector\'s; acl follows the list semantics (trimmed, lowercased, deduplicated, stored form, [] is __private__, __public__ reopens)', async () => {
    await req('PATCH', `/connectors/${connectorId}`, { body: { custom_instructions: 'Connector-wide.' } });
    const cleared = await req('PATCH', `/connectors/${connectorId}/resources/public.orders`, { body: { custom_instructions: '' } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).not.toHaveProperty('custom_instructions');
    expect(cleared.body.data.effective_custom_instructions).toBe('Connector-wide.');
    const acl = async (value: unknown) => (await req('PATCH', `/connectors/${connectorId}/resources/public.orders`, { body: { acl: value } })).body.data.acl;
    expect(await acl(['Bob@Corp.io', 'bob@corp.io', 'group:chat:ops'])).toEqual(['group:chat:ops', 'user_email:bob@corp.io']);
    expect(await acl([])).toEqual(['__private__']);
    expect(await acl(null)).toEqual(['__private__']);
    expect(await acl(['__public__', 'ann@corp.io'])).toEqual(['__public__']);
    expectError(await req('PATCH', `/connectors/${connectorId}/resources/public.nothing`, { body: { acl: [] } }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await req('PATCH', `/connectors/${connectorId}/resources/public.orders`, { body: { name: 'x' } }), 400, 'INVALID_INPUT');
  });

  it('POST /connectors/{id}/resources adds one, and on an existing id replaces it whole: omitted fields cleared, a new generation that syncs from the beginning', async () => {
    await req('PATCH', `/connectors/${connectorId}/resources/public.orders`, { body: { custom_instructions: 'Kept?', acl: ['ann@corp.io'] } });
    await t.ds.query('DELETE FROM connector_sync_requests WHERE connector_id = $1', [connectorId]);
    const replaced = await req('POST', `/connectors/${connectorId}/resources`, { body: orders({ name: 'Orders again' }) });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).toMatchObject({ replaced: true, name: 'Orders again', generation: 2, acl: ['__private__'], collection: 'default', metadata: null, lifecycle: 'initial_sync' });
    expect(replaced.body.data).not.toHaveProperty('custom_instructions');
    const requested = await t.ds.query('SELECT resource_id FROM connector_sync_requests WHERE connector_id = $1', [connectorId]);
    expect(requested).toEqual([{ resource_id: 'public.orders' }]);
    const added = await req('POST', `/connectors/${connectorId}/resources`, { body: { resource_id: 'reports/2024 q1', resource_type: 'view', name: 'Q1', collection: 'reports' } });
    expect(added.body.data).toMatchObject({ replaced: false, generation: 1, collection: 'reports', acl: null });
    // A resource id with a slash and a space is addressed URL-encoded.
    const path = `/connectors/${connectorId}/resources/${encodeURIComponent('reports/2024 q1')}`;
    expect((await req('PATCH', path, { body: { custom_instructions: 'Quarterly.' } })).body.data).toMatchObject({ resource_id: 'reports/2024 q1', custom_instructions: 'Quarterly.' });
    const before = await resources();
    expectError(await req('POST', `/connectors/${connectorId}/resources`, { body: { resource_id: 'public.orders', name: 'No type' } }), 400, 'INVALID_INPUT');
    expectError(await req('POST', `/connectors/${connectorId}/resources`, { body: orders({ custom_instructions: 'x'.repeat(4001) }) }), 400, 'INVALID_INPUT');
    expect(await resources()).toEqual(before);
  });

  it('DELETE a resource (URL-encoded id): 202, gone from the list; again is 404; ?content must be delete or keep', async () => {
    const path = `/connectors/${connectorId}/resources/${encodeURIComponent('reports/2024 q1')}`;
    expectError(await req('DELETE', `${path}?content=archive`), 400, 'INVALID_INPUT');
    const res = await req('DELETE', `${path}?content=keep`);
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({ connector_id: connectorId, resource_id: 'reports/2024 q1', removed: true, content: 'keep' });
    expect((await resources()).map((r) => r.resource_id)).not.toContain('reports/2024 q1');
    expectError(await req('DELETE', path), 404, 'RESOURCE_NOT_FOUND');
    const [removed] = (await t.store.readStream(streams.connectorResource(connectorId, 'reports/2024 q1'))).slice(-1);
    expect(removed).toMatchObject({ type: 'ResourceRemoved', data: { contentPolicy: 'keep' } });
  });

  it('pause turns scheduled syncs off (lifecycle paused), a manual sync still runs, resume turns them on', async () => {
    const paused = await req('POST', `/connectors/${connectorId}/pause`);
    expect(paused.body.data).toMatchObject({ paused: true, lifecycle: 'paused' });
    expect((await req('POST', `/connectors/${connectorId}/pause`)).body.data).toMatchObject({ paused: true });
    expect((await req('GET', `/connectors/${connectorId}/status`)).body.data.resources.every((r: any) => r.lifecycle === 'paused')).toBe(true);
    await t.ds.query('DELETE FROM connector_sync_requests WHERE connector_id = $1', [connectorId]);
    const sync = await req('POST', `/connectors/${connectorId}/sync`);
    expect(sync.status).toBe(202);
    expect(sync.body.data).toEqual({ connector_id: connectorId, sync_requested: true, resources: ['public.customers', 'public.orders'], paused: true });
    expect(await t.ds.query('SELECT resource_id FROM connector_sync_requests WHERE connector_id = $1', [connectorId])).toEqual([{ resource_id: '' }]);
    const resumed = await req('POST', `/connectors/${connectorId}/resume`);
    expect(resumed.body.data).toMatchObject({ paused: false, lifecycle: 'initial_sync' });
  });

  it('sync of a connector without resources is 409 CONNECTOR_NOT_CONFIGURED', async () => {
    const bare = await create();
    expectError(await req('POST', `/connectors/${bare.body.data.connector_id}/sync`), 409, 'CONNECTOR_NOT_CONFIGURED');
  });

  it('PATCH credentials: a refused password is 422 and keeps the old ones; good ones are sealed anew, the old row deleted and a sync requested', async () => {
    const stream = streams.connector(connectorId);
    const credentialsId = async () => {
      let id: string | undefined;
      for (const e of await t.store.readStream(stream)) {
        if (e.type === 'ConnectorCreated') id = e.data.credentialsId;
        if (e.type === 'ConnectorCredentialsRotated') id = e.data.credentialsId;
      }
      return id!;
    };
    const oldId = await credentialsId();
    await admin.query(`ALTER ROLE ${ROLE} PASSWORD '${NEW_PASSWORD}'`);
    expectError(await req('PATCH', `/connectors/${connectorId}`, { body: { credentials: { connection_string: urlFor(ROLE, 'still-wrong') }, sync_interval_seconds: 7200 } }), 422, 'CONNECTOR_CREDENTIALS_REFUSED');
    expect(await credentialsId()).toBe(oldId);
    expect((await get()).data.sync_interval_seconds).toBe(900);
    await t.ds.query('DELETE FROM connector_sync_requests WHERE connector_id = $1', [connectorId]);
    const res = await req('PATCH', `/connectors/${connectorId}`, { body: { credentials: { connection_string: urlFor(ROLE, NEW_PASSWORD) } } });
    expect(res.status).toBe(200);
    expect(res.body.data.credentials).toEqual({ connection_string: '***' });
    const newId = await credentialsId();
    expect(newId).not.toBe(oldId);
    const vault = t.get(CONNECTOR_CREDENTIALS);
    expect(await vault.get('default', oldId)).toBeNull();
    expect(await vault.get('default', newId)).toEqual({ connection_string: urlFor(ROLE, NEW_PASSWORD) });
    expect(await t.ds.query('SELECT resource_id FROM connector_sync_requests WHERE connector_id = $1', [connectorId])).toEqual([{ resource_id: '' }]);
    expect((await req('GET', `/connectors/${connectorId}/discover`)).status).toBe(200);
    await admin.query(`ALTER ROLE ${ROLE} PASSWORD '${PASSWORD}'`);
  });

  it('other organizations and keys limited to other databases get 404 for every route, and do not see it in lists', async () => {
    const foreign = (await t.keys.create('other-org')).key;
    const limited = (await t.keys.create('default', { databases: ['other'] })).key;
    const within = (await t.keys.create('default', { databases: ['shop'] })).key;
    const routes: [string, string, unknown?][] = [
      ['GET', `/connectors/${connectorId}`],
      ['GET', `/connectors/${connectorId}/status`],
      ['GET', `/connectors/${connectorId}/resources`],
      ['GET', `/connectors/${connectorId}/discover`],
      ['POST', `/connectors/${connectorId}/configure`, { resources: [orders()] }],
      ['POST', `/connectors/${connectorId}/sync`],
      ['POST', `/connectors/${connectorId}/pause`],
      ['POST', `/connectors/${connectorId}/resume`],
      ['PATCH', `/connectors/${connectorId}`, { sync_interval_seconds: 600 }],
      ['PATCH', `/connectors/${connectorId}/resources/public.orders`, { acl: [] }],
      ['POST', `/connectors/${connectorId}/resources`, orders()],
      ['DELETE', `/connectors/${connectorId}/resources/public.orders`],
      ['DELETE', `/connectors/${connectorId}`],
    ];
    const before = { connector: (await get()).data, resources: await resources() };
    for (const key of [foreign, limited]) {
      for (const [method, url, body] of routes) {
        const res = await req(method, url, { body, headers: { authorization: `Bearer ${key}` } });
        expect({ method, url, status: res.status, code: res.body.error?.code }).toEqual({ method, url, status: 404, code: 'CONNECTOR_NOT_FOUND' });
      }
      const listed = await req('GET', '/connectors', { headers: { authorization: `Bearer ${key}` } });
      expect(listed.body.data.connectors).toEqual([]);
    }
    expect({ connector: (await get()).data, resources: await resources() }).toEqual(before);
    expectError(await req('GET', '/connectors?database=shop', { headers: { authorization: `Bearer ${limited}` } }), 404, 'DATABASE_NOT_FOUND');
    expect((await req('GET', `/connectors/${connectorId}`, { headers: { authorization: `Bearer ${within}` } })).status).toBe(200);
    expectError(await req('GET', '/connectors/00000000-0000-4000-8000-000000000000'), 404, 'CONNECTOR_NOT_FOUND');
    expectError(await req('GET', '/connectors/not-a-uuid'), 404, 'CONNECTOR_NOT_FOUND');
  });

  it('DELETE /connectors/{id}: 202, then 404 and out of every list; once the deletion has run, the connector is gone for good', async () => {
    const doomed = (await create()).body.data.connector_id;
    await req('POST', `/connectors/${doomed}/configure`, { body: { resources: [orders()] } });
    const res = await req('DELETE', `/connectors/${doomed}`);
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({ connector_id: doomed, deletion_requested: true, content: 'delete' });
    expectError(await req('GET', `/connectors/${doomed}`), 404, 'CONNECTOR_NOT_FOUND');
    expectError(await req('GET', `/connectors/${doomed}/status`), 404, 'CONNECTOR_NOT_FOUND');
    expectError(await req('POST', `/connectors/${doomed}/sync`), 404, 'CONNECTOR_NOT_FOUND');
    expect((await req('GET', '/connectors')).body.data.connectors.map((c: any) => c.connector_id)).not.toContain(doomed);
    // The worker's deletion processor finishes it (ConnectorDeleted); repeating the request while it runs is accepted
    // and another content policy refused (connector.decider.spec.ts), after it the connector is simply not found.
    for (let i = 0; i < 200 && !(await t.store.readStream(streams.connector(doomed))).some((e) => e.type === 'ConnectorDeleted'); i++) await new Promise((r) => setTimeout(r, 50));
    expect((await t.store.readStream(streams.connector(doomed))).map((e) => e.type)).toContain('ConnectorDeleted');
    expectError(await req('DELETE', `/connectors/${doomed}`), 404, 'CONNECTOR_NOT_FOUND');
    expectError(await req('DELETE', `/connectors/${doomed}?content=keep`), 404, 'CONNECTOR_NOT_FOUND');
    expect(await t.ds.query('SELECT 1 FROM connector_sync_requests WHERE connector_id = $1', [doomed])).toEqual([]);
  });

  it('no response body and no event of the log holds a credential', async () => {
    expect(bodies.length).toBeGreaterThan(50);
    for (const secret of [PASSWORD, NEW_PASSWORD]) {
      expect(bodies.filter((b) => b.includes(secret))).toEqual([]);
      const log = JSON.stringify(await t.store.readAll());
      expect(log).toContain(connectorId); // the log was read: the connector's events are in it
      expect(log.includes(secret)).toBe(false);
    }
  });
});

describe('the /connectors routes with CONNECTOR_ALLOW_PRIVATE_NETWORKS off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    if (!sourceUrl) await createSource();
    t = await startTestApp('connectors_ssrf');
    expect(t.config.connectors.allowPrivateNetworks).toBe(false);
    await t.createDatabase('shop');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('refuses a connection string that leads to a loopback or private address with 400 CONNECTOR_TARGET_FORBIDDEN, storing nothing', async () => {
    for (const host of ['127.0.0.1', 'localhost', '10.0.0.7', '169.254.169.254', '[::1]']) {
      const res = await t.request('POST', '/connectors', { body: { provider: 'postgres', database: 'shop', credentials: { connection_string: urlFor(ROLE, PASSWORD, host) } } });
      expect({ host, status: res.status, code: res.body.error?.code }).toEqual({ host, status: 400, code: 'CONNECTOR_TARGET_FORBIDDEN' });
      expect(res.raw).not.toContain(PASSWORD);
    }
    expect((await t.request('GET', '/connectors')).body.data.connectors).toEqual([]);
    expect((await t.ds.query('SELECT count(*)::int AS n FROM connector_credentials'))[0].n).toBe(0);
  });
});
