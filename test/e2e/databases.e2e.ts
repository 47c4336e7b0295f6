import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, waitForDatabaseDeleted, waitForStatus } from '../support/ingest';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('databases and collections through HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('databases');
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a database asynchronously; its four flags flip to true one by one, as each part is provisioned', async () => {
    // Each part's provisioning waits for its gate, so every intermediate state is observed, none skipped.
    const parts = ['scheduler', 'graph', 'vectorstore.knowledge', 'vectorstore.memories'];
    const gate = () => {
      let open!: () => void;
      const opened = new Promise<void>((r) => (open = r));
      return { opened, open };
    };
    const started = new Map(parts.map((p) => [p, gate()]));
    const release = new Map(parts.map((p) => [p, gate()]));
    const provision = t.resources.provision.bind(t.resources);
    t.resources.provision = async (databaseId, component, embedder) => {
      started.get(component)!.open();
      await release.get(component)!.opened;
      return provision(databaseId, component, embedder);
    };
    const flagsOf = async () => {
      const st = await t.request('GET', '/databases/status?database=acme');
      expect(st.status).toBe(200);
      const f = st.body.data;
      return { status: f.status, flags: [f.scheduler_status, f.graph_status, f.vectorstore_status.knowledge, f.vectorstore_status.memories], provisioned: f.provisioned };
    };
    /** Polls until `n` flags are true (the databases read model follows the processor's events). */
    const untilTrue = async (n: number) => {
      for (let i = 0; i < 400; i++) {
        const s = await flagsOf();
        if (s.flags.filter(Boolean).length >= n) return s;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`fewer than ${n} flags turned true`);
    };
    let res: Awaited<ReturnType<typeof t.request>>;
    try {
      res = await t.request('POST', '/databases', { body: { database: 'acme' } });
      expect(res.status).toBe(202);
      await started.get('scheduler')!.opened;
      expect(await flagsOf()).toEqual({ status: 'provisioning', flags: [false, false, false, false], provisioned: false });
      for (const [i, part] of parts.entries()) {
        release.get(part)!.open();
        if (i + 1 < parts.length) {
          await started.get(parts[i + 1])!.opened;
          // This part is done, the next ones are not: a flag that is still false while others are true.
          expect(await untilTrue(i + 1)).toEqual({ status: 'provisioning', flags: parts.map((_, j) => j <= i), provisioned: false });
        }
      }
      expect(await untilTrue(4)).toEqual({ status: 'ready', flags: [true, true, true, true], provisioned: true });
    } finally {
      t.resources.provision = provision;
      for (const g of release.values()) g.open();
    }
    expect(res.status).toBe(202);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({ database: 'acme', status: 'provisioning' });
    expect(res.body.meta.request_id).toMatch(UUID);
    expect(res.headers['x-request-id']).toBe(res.body.meta.request_id);
    expect(res.body.meta.api_version).toBe('2.0.1');
    expect(typeof res.body.meta.latency_ms).toBe('number');
    const st = await t.request('GET', '/databases/status?database=acme');
    expect(st.body.data).toMatchObject({ database: 'acme', scheduler_status: true, graph_status: true, vectorstore_status: { knowledge: true, memories: true }, provisioned: true });
  });

  it('rejects a duplicate name with 409 and invalid names with 400', async () => {
    await t.createDatabase('dup');
    const again = await t.request('POST', '/databases', { body: { database: 'dup' } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('DATABASE_EXISTS');
    for (const bad of ['', 'has space', '-lead', 'x'.repeat(64), 'semi;colon']) {
      const r = await t.request('POST', '/databases', { body: { database: bad } });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('INVALID_INPUT');
    }
  });

  it('validates metadata schemas and accepts the SDK data_type names', async () => {
    const bad = await t.request('POST', '/databases', { body: { database: 'schema-bad', metadata_schema: [{ name: 'x', type: 'wat' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/type 'wat'/);
    const dupe = await t.request('POST', '/databases', { body: { database: 'schema-bad', metadata_schema: [{ name: 'a' }, { name: 'a' }] } });
    expect(dupe.status).toBe(400);
    const ok = await t.request('POST', '/tenants', { body: { tenant_id: 'schema-ok', tenant_metadata_schema: [{ name: 'team', data_type: 'VARCHAR' }, { name: 'year', data_type: 'INT64' }] } });
    expect(ok.status).toBe(202);
    expect(ok.body.data).toMatchObject({ tenant_id: 'schema-ok' });
    const list = await t.request('GET', '/databases');
    const db = list.body.data.databases.find((d: any) => d.database === 'schema-ok');
    expect(db.metadata_schema).toEqual([
      { name: 'team', type: 'string', nullable: true },
      { name: 'year', type: 'integer', nullable: true },
    ]);
  });

  it('rejects unknown fields and wrong types naming the field, and appends nothing', async () => {
    const unknown = await t.request('POST', '/databases', { body: { database: 'x1', colour: 'red' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/colour/);
    const wrong = await t.request('POST', '/databases', { body: { database: 42 } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toMatch(/database/);
    const badJson = await t.request('POST', '/databases', { body: '{"database":', headers: { 'content-type': 'application/json' } });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.code).toBe('INVALID_INPUT');
    const rejected = new Set([unknown, wrong, badJson].map((r) => r.body.meta.request_id));
    const traces = (await t.store.readAll()).filter((e) => rejected.has(e.metadata.requestId as string));
    expect(traces).toEqual([]);
    expect(await t.directory.find('default', 'x1')).toBeNull();
  });

  it('lists databases; the legacy /tenants shapes work with deprecation notices', async () => {
    await t.createDatabase('listed');
    const list = await t.request('GET', '/databases');
    expect(list.status).toBe(200);
    expect(list.body.data.databases.map((d: any) => d.database)).toContain('listed');
    expect(list.body.meta.deprecation).toBeUndefined();
    const tenants = await t.request('GET', '/tenants');
    expect(tenants.body.data.tenant_ids).toContain('listed');
    expect(tenants.body.meta.deprecation[0]).toMatchObject({ deprecated: true, deprecated_field: '/tenants', preferred_field: '/databases', deprecated_since: '2.0.1' });
    const st = await t.request('GET', '/tenants/status?tenant_id=listed');
    expect(st.status).toBe(200);
    expect(st.body.data).toMatchObject({ tenant_id: 'listed', org_id: 'default', infra: { scheduler_status: true, graph_status: true, vectorstore_status: { knowledge: true, memories: true }, ready_for_ingestion: true } });
    const fields = st.body.meta.deprecation.map((d: any) => d.deprecated_field);
    expect(fields).toContain('tenant_id');
    const notice = st.body.meta.deprecation.find((d: any) => d.deprecated_field === 'tenant_id');
    expect(Object.keys(notice).sort()).toEqual(['deprecated', 'deprecated_field', 'deprecated_since', 'message', 'preferred_field']);
    expect(st.body.meta.tenant_id).toBe('listed');
  });

  it('answers 404 DATABASE_NOT_FOUND for a missing database and for one the key cannot reach, alike', async () => {
    await t.createDatabase('secret-db');
    const { key } = await t.keys.create('default', { databases: ['other'] });
    const missing = await t.request('GET', '/databases/status?database=nope');
    const hidden = await t.request('GET', '/databases/status?database=secret-db', { headers: { authorization: `Bearer ${key}` } });
    expect(missing.status).toBe(404);
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe('DATABASE_NOT_FOUND');
    expect(missing.body.error.code).toBe(hidden.body.error.code);
    const list = await t.request('GET', '/databases', { headers: { authorization: `Bearer ${key}` } });
    expect(list.body.data.databases).toEqual([]);
  });

  it('keeps organizations apart', async () => {
    await t.createDatabase('org-a-db');
    const { key } = await t.keys.create('other-org');
    const list = await t.request('GET', '/databases', { headers: { authorization: `Bearer ${key}` } });
    expect(list.body.data.databases).toEqual([]);
    const st = await t.request('GET', '/databases/status?database=org-a-db', { headers: { authorization: `Bearer ${key}` } });
    expect(st.status).toBe(404);
    // Same name in another organization is a different database.
    const mine = await t.request('POST', '/databases', { body: { database: 'org-a-db' }, headers: { authorization: `Bearer ${key}` } });
    expect(mine.status).toBe(202);
  });

  it('deletes a database asynchronously; it disappears and the name can be reused', async () => {
    await t.createDatabase('doomed');
    const del = await t.request('DELETE', '/databases?database=doomed');
    expect(del.status).toBe(202);
    expect(del.body.data).toMatchObject({ database: 'doomed', status: 'deleting' });
    const gone = await t.request('GET', '/databases/status?database=doomed');
    expect(gone.status).toBe(404);
    let reused = 0;
    for (let i = 0; i < 400 && reused !== 202; i++) {
      reused = (await t.request('POST', '/databases', { body: { database: 'doomed' } })).status;
      if (reused !== 202) await new Promise((r) => setTimeout(r, 25));
    }
    expect(reused).toBe(202);
    const audit = (await t.store.readAll()).filter((e) => e.type === 'DatabaseDeleted');
    expect(audit.some((e) => e.data.name === 'doomed' && e.metadata.orgId === 'default' && String(e.data.requestedBy).startsWith('key:'))).toBe(true);
  });

  it('takes the names of DELETE /databases and /databases/collections from a JSON body too', async () => {
    await t.createDatabase('body-del');
    const noColl = await t.request('DELETE', '/databases/collections', { body: { database: 'body-del', collection: 'none' } });
    expect(noColl.status).toBe(404); // the body was read: the database exists, the collection does not
    expect(noColl.body.error.code).toBe('COLLECTION_NOT_FOUND');
    const del = await t.request('DELETE', '/databases', { body: { database: 'body-del' } });
    expect(del.status).toBe(202);
    expect(del.body.data).toMatchObject({ database: 'body-del', status: 'deleting' });
    expect((await t.request('GET', '/databases/status?database=body-del')).status).toBe(404);
    await t.createDatabase('body-keep');
    const both = await t.request('DELETE', '/databases?database=nope-not-here', { body: { database: 'body-keep' } });
    expect(both.status).toBe(400); // two different targets: refused ...
    expect((await t.request('GET', '/databases/status?database=body-keep')).status).toBe(200); // ... and the body's database stays
  });

  it('deleting a database removes its blobs (raw content, chunk lists, graphs: rows and files) from disk, its recorded queries and the streams of items deleted earlier', async () => {
    await t.createDatabase('blobby');
    const long = Array.from({ length: 80 }, (_, i) => `WOMBATSECRET line ${i}, long enough to be stored as a file.`).join('\n');
    await ingestMemories(t, 'blobby', [{ id: 'b1', text: 'PLATYPUSSECRET the salary of employee 8 is 90008.' }, { id: 'b2', text: 'QUOKKASECRET deleted on its own first.' }, { id: 'b3', text: long }]);
    await waitForStatus(t, 'blobby', ['b1', 'b2', 'b3']);
    expect((await t.request('POST', '/query', { body: { database: 'blobby', query: 'PLATYPUSSECRET salary' } })).status).toBe(200);
    expect((await t.request('DELETE', '/context', { body: { database: 'blobby', ids: ['b2'] } })).status).toBeLessThan(300);
    await t.runner.waitFor(await t.store.headPosition(), undefined, 10_000);
    const [{ database_id: id }] = await t.ds.query(`SELECT database_id FROM rm_items WHERE item_id = 'b1'`);
    const dir = join(t.config.dataDir, 'blobs', id);
    const rows = async () => Number((await t.ds.query('SELECT count(*) AS n FROM blob_rows WHERE database_id = $1', [id]))[0].n);
    expect(await rows()).toBeGreaterThan(0); // small blobs are rows, larger ones files
    expect(readdirSync(dir).length).toBeGreaterThan(0);
    expect((await t.request('DELETE', '/databases?database=blobby')).status).toBe(202);
    await waitForDatabaseDeleted(t, id);
    expect(existsSync(dir)).toBe(false);
    expect(await rows()).toBe(0);
    const left = (await t.store.readAll()).filter((e) => e.stream.includes(id));
    expect(left.map((e) => `${e.stream} ${e.type}`)).toEqual([]);
    expect(JSON.stringify(await t.store.readAll())).not.toMatch(/PLATYPUSSECRET|QUOKKASECRET|WOMBATSECRET|"b2"/);
  });

  it('deletes through the legacy DELETE /tenants?tenant_id= without a body or content type', async () => {
    await t.createDatabase('legacy-del');
    const res = await t.app.inject({ method: 'DELETE', url: '/tenants?tenant_id=legacy-del', headers: { authorization: `Bearer ${t.key}`, 'api-version': '2' } });
    expect(res.statusCode).toBe(202);
    expect(res.json().data).toMatchObject({ tenant_id: 'legacy-del', status: 'deleting' });
  });

  it('lists collections (none before ingestion) and 404s deleting a missing collection', async () => {
    await t.createDatabase('colls');
    const list = await t.request('GET', '/databases/collections?database=colls');
    expect(list.status).toBe(200);
    expect(list.body.data).toMatchObject({ database: 'colls', collections: [], count: 0 });
    const sub = await t.request('GET', '/tenants/sub-tenants?tenant_id=colls');
    expect(sub.body.data.sub_tenant_ids).toEqual([]);
    const del = await t.request('DELETE', '/databases/collections?database=colls&collection=none');
    expect(del.status).toBe(404);
    expect(del.body.error.code).toBe('COLLECTION_NOT_FOUND');
    const noColl = await t.request('DELETE', '/databases/collections?database=colls');
    expect(noColl.status).toBe(400);
  });
});
