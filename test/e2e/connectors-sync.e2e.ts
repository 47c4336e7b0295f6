import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { configFromEnv } from '@crs/config';
import { createTestDatabase } from '../support/test-database';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A connector from its first route to its documents in query results, through HTTP only: a source database on the
 * run's embedded Postgres (read by a role that may only SELECT), the database provider, the scheduler and sync engine
 * in the app's worker role, the indexing pipeline, and POST /query.
 */
const ROLE = `crs_sync_${randomBytes(3).toString('hex')}`;
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;

describe('a connector synced end to end through the API', () => {
  let t: TestApp;
  let admin: Client;
  let sourceUrl: string;
  let connectorId: string;

  const status = async () => (await t.request('GET', `/connectors/${connectorId}/status`)).body.data;
  /** Waits until every resource has completed a sync at least as recent as the request made before it. */
  const untilSynced = async (after: Date) => {
    for (let i = 0; i < 400; i++) {
      const s = await status();
      const done = s.resources.every((r: any) => r.last_sync && r.last_sync.outcome === 'completed' && new Date(r.last_sync.ended_at) >= after);
      if (done && s.lifecycle === 'active') return s;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`not synced: ${JSON.stringify(await status())}`);
  };
  const syncNow = async () => {
    const at = new Date();
    expect((await t.request('POST', `/connectors/${connectorId}/sync`)).status).toBe(202);
    await untilSynced(at);
    await waitForItemsSearchable();
  };
  const waitForItemsSearchable = async () => {
    for (let i = 0; i < 400; i++) {
      const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE connector_id = $1 AND status NOT IN ('graph_creation', 'completed')`, [connectorId]);
      if (n === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('synced items did not become searchable');
  };
  const query = async (text: string, extra: Record<string, unknown> = {}) => {
    const res = await t.request('POST', '/query', { body: { query: text, database: 'synced', type: 'knowledge', max_results: 20, ...extra } });
    expect(res.status).toBe(200);
    return res.body.data.chunks as any[];
  };

  beforeAll(async () => {
    sourceUrl = await createTestDatabase('conn_sync_source');
    admin = new Client({ connectionString: sourceUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
    await admin.query(`CREATE TABLE public.notes (id int PRIMARY KEY, title text, body text, updated_at timestamptz)`);
    await admin.query(`INSERT INTO public.notes VALUES
      (1, 'Kestrel survey', 'The kestrel nests on the old water tower.', now()),
      (2, 'Heron survey', 'A grey heron fishes by the weir every morning.', now()),
      (3, 'Owl survey', 'Barn owls hunt over the meadow at dusk.', now())`);
    await admin.query(`CREATE TABLE public.trees (id int PRIMARY KEY, body text)`);
    await admin.query(`INSERT INTO public.trees VALUES (1, 'An ancient yew stands in the churchyard.'), (2, 'The copper beech lost a limb in the storm.')`);
    await admin.query(`GRANT USAGE ON SCHEMA public TO ${ROLE}`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${ROLE}`);
    t = await startTestApp('connectors_sync', { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true, pollMs: 50 } });
    await t.createDatabase('synced');
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await admin?.query(`DROP OWNED BY ${ROLE}`).catch(() => undefined);
    await admin?.end();
  });

  it('create, discover, configure: the first sync makes the rows searchable, with the system fields on each document', async () => {
    const u = new URL(sourceUrl);
    u.username = ROLE;
    u.password = PASSWORD;
    const created = await t.request('POST', '/connectors', { body: { provider: 'postgres', database: 'synced', credentials: { connection_string: u.toString() } } });
    expect(created.status).toBe(201);
    connectorId = created.body.data.connector_id;
    const discovered = (await t.request('GET', `/connectors/${connectorId}/discover`)).body.data.resources;
    expect(discovered.map((r: any) => r.resource_id)).toContain('public.notes');

    const before = new Date();
    const configured = await t.request('POST', `/connectors/${connectorId}/configure`, { body: { resources: [{ resource_id: 'public.notes', resource_type: 'table', name: 'Notes' }, { resource_id: 'public.trees', resource_type: 'table', name: 'Trees' }] } });
    expect(configured.status).toBe(200);
    const s = await untilSynced(before);
    expect(s).toMatchObject({ status: 'healthy', lifecycle: 'active' });
    await waitForItemsSearchable();

    const hits = await query('where does the kestrel nest', { query_apps: true });
    const kestrel = hits.find((c) => /kestrel nests/.test(c.chunk_content));
    expect(kestrel).toBeDefined();
    expect(kestrel.metadata).toMatchObject({ connector_id: connectorId, provider: 'postgres' });
    expect(kestrel.additional_metadata).toMatchObject({ connector_id: connectorId, resource_id: 'public.notes' });
    const listed = await t.request('POST', '/context/list', { body: { database: 'synced', page_size: 100 } });
    expect(listed.body.data.sources).toHaveLength(5);
  });

  it('an edit and a deletion at the source reach the query results on the next sync', async () => {
    await admin.query(`UPDATE public.notes SET body = 'The kestrel moved to the church spire.', updated_at = now() + interval '1 second' WHERE id = 1`);
    await admin.query(`DELETE FROM public.notes WHERE id = 3`);
    await syncNow();
    const kestrel = await query('kestrel');
    expect(kestrel.map((c) => c.chunk_content)).toEqual(expect.arrayContaining([expect.stringMatching(/church spire/)]));
    expect(kestrel.some((c) => /water tower/.test(c.chunk_content))).toBe(false);
    expect((await query('barn owls hunt over the meadow')).some((c) => /Barn owls/.test(c.chunk_content))).toBe(false);
  });

  it('a second sync of an unchanged source appends no item event', async () => {
    const count = async () => {
      let n = 0;
      for (let after = 0; ; ) {
        const page = await t.store.readAll({ after, maxCount: 1000 });
        if (!page.length) return n;
        n += page.filter((e) => e.type === 'ItemIngested' || e.type === 'ItemDeleted').length;
        after = page[page.length - 1].position;
      }
    };
    const before = await count();
    await syncNow();
    expect(await count()).toBe(before);
  });

  it('query_apps false leaves connector content out of the results', async () => {
    expect((await query('grey heron weir', { query_apps: true })).some((c) => /heron/.test(c.chunk_content))).toBe(true);
    expect((await query('grey heron weir', { query_apps: false })).some((c) => /heron/.test(c.chunk_content))).toBe(false);
  });

  it("a resource's access rule applies to its synced rows on the next query, with no new item event", async () => {
    const heron = async (acl?: string[]) => (await query('grey heron weir', acl ? { acl } : {})).some((c) => /heron/.test(c.chunk_content));
    const itemEvents = async () => (await t.store.readAll({ maxCount: 100_000 })).filter((e) => e.type.startsWith('Item')).length;
    const before = await itemEvents();
    expect(await heron(['bob@corp.io'])).toBe(true);
    const patched = await t.request('PATCH', `/connectors/${connectorId}/resources/public.notes`, { body: { acl: ['ann@corp.io'] } });
    expect(patched.status).toBe(200);
    expect(await heron(['bob@corp.io'])).toBe(false);
    expect(await heron(['ann@corp.io'])).toBe(true);
    await t.request('PATCH', `/connectors/${connectorId}/resources/public.notes`, { body: { acl: ['__public__'] } });
    expect(await heron(['bob@corp.io'])).toBe(true);
    expect(await itemEvents()).toBe(before);
  });

  it("removing a resource with content=delete deletes its synced items; with content=keep they stay served", async () => {
    const synced = async (resourceId: string) => (await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE connector_id = $1 AND resource_id = $2`, [connectorId, resourceId]))[0].n;
    expect(await synced('public.trees')).toBe(2);
    expect((await query('ancient yew churchyard')).some((c) => /yew/.test(c.chunk_content))).toBe(true);
    expect((await t.request('DELETE', `/connectors/${connectorId}/resources/public.trees?content=delete`)).status).toBe(202);
    expect((await query('ancient yew churchyard')).some((c) => /yew/.test(c.chunk_content))).toBe(false);
    for (let i = 0; i < 200 && (await synced('public.trees')) > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await synced('public.trees')).toBe(0);

    const notes = await synced('public.notes');
    expect(notes).toBe(2);
    expect((await t.request('DELETE', `/connectors/${connectorId}/resources/public.notes?content=keep`)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 300)); // time for a processor that should not act
    expect(await synced('public.notes')).toBe(notes);
    expect((await query('grey heron weir')).some((c) => /heron/.test(c.chunk_content))).toBe(true);
  });
});
