import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, postMultipart, waitForStatus } from '../support/ingest';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'ingestion', name));
const ids = (res: any) => res.body.data.chunks.map((c: any) => c.id);

describe('context items through HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('context');
    await t.createDatabase('ctx', { metadata_schema: [{ name: 'team', type: 'string' }] });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('memory item rules', () => {
    it('text xor user_assistant_pairs: both or neither is 400 and stores nothing', async () => {
      const both = await ingestMemories(t, 'ctx', [{ id: 'x', text: 'a', user_assistant_pairs: [{ user: 'u', assistant: 'a' }] }]);
      expect(both.status).toBe(400);
      const neither = await ingestMemories(t, 'ctx', [{ id: 'y', title: 'no content' }]);
      expect(neither.status).toBe(400);
      const status = await t.request('GET', '/context/status?database=ctx&ids=x&ids=y');
      expect(status.body.data.statuses.map((s: any) => s.indexing_status)).toEqual(['not_found', 'not_found']);
    });

    it('metadata as an object is 400 INVALID_INPUT; it must be a JSON string that fits the schema', async () => {
      const obj = await ingestMemories(t, 'ctx', [{ id: 'o', text: 'hi', metadata: { team: 'a' } }]);
      expect(obj.status).toBe(400);
      expect(obj.body.error.code).toBe('INVALID_INPUT');
      expect(obj.body.error.message).toMatch(/metadata/);
      const unknown = await ingestMemories(t, 'ctx', [{ id: 'o', text: 'hi', metadata: JSON.stringify({ colour: 'a' }) }]);
      expect(unknown.status).toBe(400);
      const wrongType = await ingestMemories(t, 'ctx', [{ id: 'o', text: 'hi', metadata: JSON.stringify({ team: 5 }) }]);
      expect(wrongType.status).toBe(400);
      const ok = await ingestMemories(t, 'ctx', [{ id: 'o', text: 'hi there', metadata: JSON.stringify({ team: 'a' }), additional_metadata: { source: 'x' } }]);
      expect(ok.status).toBe(200);
    });

    it('one invalid item rejects the whole request', async () => {
      const res = await ingestMemories(t, 'ctx', [{ id: 'good-1', text: 'fine' }, { id: 'bad-1', text: 5 }]);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/memories\[1\]\.text/);
      const st = await t.request('GET', '/context/status?database=ctx&ids=good-1');
      expect(st.body.data.statuses[0].indexing_status).toBe('not_found');
    });

    it('items without id get one; custom_instructions are kept only when infer is true', async () => {
      const res = await ingestMemories(t, 'ctx', [
        { text: 'no id here', infer: false, custom_instructions: 'ignored' },
        { id: 'inf', text: 'I love hiking in the Alps', infer: true, custom_instructions: 'extract hobbies', user_name: 'Ann' },
      ]);
      expect(res.status).toBe(200);
      const [generated, inf] = res.body.data.results;
      expect(generated.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(inf).toMatchObject({ id: 'inf', infer: true });
      const rows = await t.ds.query(`SELECT item_id, custom_instructions, user_name FROM rm_items WHERE item_id = ANY($1) ORDER BY item_id`, [[generated.id, 'inf']]);
      expect(rows.find((r: any) => r.item_id === generated.id).custom_instructions).toBeNull();
      expect(rows.find((r: any) => r.item_id === 'inf')).toMatchObject({ custom_instructions: 'extract hobbies', user_name: 'Ann' });
    });

    it('upsert true replaces the item and its chunks; upsert false fails only the existing id', async () => {
      await ingestMemories(t, 'ctx', [{ id: 'up', text: 'The launch code word is pineapple.' }]);
      await waitForStatus(t, 'ctx', ['up']);
      await ingestMemories(t, 'ctx', [{ id: 'up', text: 'The launch code word is mango.' }]);
      await waitForStatus(t, 'ctx', ['up']);
      const q = await t.request('POST', '/query', { body: { database: 'ctx', query: 'launch code word', type: 'memory' } });
      const hits = q.body.data.chunks.filter((c: any) => c.id === 'up');
      expect(hits).toHaveLength(1);
      expect(hits[0].chunk_content).toContain('mango');
      expect((await t.request('POST', '/query', { body: { database: 'ctx', query: 'pineapple', query_by: 'text' } })).body.data.chunks.map((c: any) => c.id)).not.toContain('up');

      const res = await ingestMemories(t, 'ctx', [{ id: 'up', text: 'should fail' }, { id: 'fresh', text: 'a fresh memory' }], { upsert: 'false' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ success_count: 1, failed_count: 1 });
      expect(res.body.data.results[0]).toMatchObject({ id: 'up', status: 'failed', error_code: 'ITEM_EXISTS' });
      expect(res.body.data.results[1]).toMatchObject({ id: 'fresh', status: 'queued' });
    });

    it('expired memories stop surfacing anywhere', async () => {
      // 6 s: room for indexing on a loaded machine before the first query (2 s was flaky under parallel suites).
      const accepted = Date.now();
      await ingestMemories(t, 'ctx', [{ id: 'ttl', text: 'The temporary wifi password is orangutan42.', expiry_time: 6 }]);
      await waitForStatus(t, 'ctx', ['ttl']);
      const before = await t.request('POST', '/query', { body: { database: 'ctx', query: 'temporary wifi password', type: 'memory' } });
      expect(ids(before)).toContain('ttl');
      expect((await t.request('POST', '/context/list', { body: { database: 'ctx', type: 'memory', ids: ['ttl'] } })).body.data.user_memories).toHaveLength(1);
      const inspected = await t.request('GET', '/context/inspect?database=ctx&id=ttl&mode=both');
      expect([inspected.status, inspected.body.data.content]).toEqual([200, 'The temporary wifi password is orangutan42.']);
      const presigned = new URL(inspected.body.data.presigned_url).pathname;
      expect((await t.app.inject({ method: 'GET', url: presigned })).statusCode).toBe(200);
      await new Promise((r) => setTimeout(r, Math.max(0, accepted + 6100 - Date.now())));
      const after = await t.request('POST', '/query', { body: { database: 'ctx', query: 'temporary wifi password', type: 'memory' } });
      expect(ids(after)).not.toContain('ttl');
      const list = await t.request('POST', '/context/list', { body: { database: 'ctx', type: 'memory', ids: ['ttl'] } });
      expect(list.body.data.user_memories).toEqual([]);
      // /context/inspect too, and a presigned URL made before the expiry.
      const gone = await t.request('GET', '/context/inspect?database=ctx&id=ttl');
      expect([gone.status, gone.body.error.code]).toEqual([404, 'ITEM_NOT_FOUND']);
      const viaUrl = await t.app.inject({ method: 'GET', url: presigned });
      expect([viaUrl.statusCode, viaUrl.json().error.code]).toEqual([404, 'ITEM_NOT_FOUND']);
    });

    it('is_markdown chunks by heading sections', async () => {
      const text = `# Handbook\n\n## Vacation\n\n${'Employees get twenty-five days of paid vacation each year. '.repeat(30)}\n\n## Expenses\n\nSubmit receipts for the walrus fund within thirty days.`;
      await ingestMemories(t, 'ctx', [{ id: 'md', text, is_markdown: true }]);
      await waitForStatus(t, 'ctx', ['md']);
      const q = await t.request('POST', '/query', { body: { database: 'ctx', query: 'walrus fund receipts', type: 'memory' } });
      const hit = q.body.data.chunks.find((c: any) => c.id === 'md');
      expect(hit.chunk_content).toMatch(/Expenses/);
      expect(hit.chunk_content).not.toMatch(/vacation each year/);
    });
  });

  describe('knowledge files', () => {
    it('txt, md, html, pdf, docx, csv and json ingest and become searchable', async () => {
      const files = [
        { filename: 'sample.txt', contentType: 'text/plain' },
        { filename: 'sample.md', contentType: 'text/markdown' },
        { filename: 'sample.html', contentType: 'text/html' },
        { filename: 'sample.pdf', contentType: 'application/pdf' },
        { filename: 'sample.docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
        { filename: 'sample.csv', contentType: 'text/csv' },
        { filename: 'sample.json', contentType: 'application/json' },
      ];
      const res = await postMultipart(
        t,
        '/context/ingest',
        { type: 'knowledge', database: 'ctx', document_metadata: JSON.stringify(files.map((f) => ({ id: `f-${f.filename}` }))) },
        files.map((f) => ({ ...f, content: fixture(f.filename) })),
      );
      expect(res.status).toBe(200);
      const fileIds = files.map((f) => `f-${f.filename}`);
      const st = await waitForStatus(t, 'ctx', fileIds, ['completed', 'errored'], 60_000);
      expect(st.map((s: any) => [s.id, s.indexing_status])).toEqual(fileIds.map((id) => [id, 'completed']));
      const chunks = await t.ds.query(`SELECT item_id, chunk_count FROM rm_items WHERE item_id = ANY($1)`, [fileIds]);
      expect(chunks.every((c: any) => c.chunk_count > 0)).toBe(true);
    });

    it('an unparseable file ends errored with an error_code and message, not a 500', async () => {
      const res = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'ctx', document_metadata: JSON.stringify([{ id: 'broken' }]) }, [
        { filename: 'random-bytes.docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', content: fixture('random-bytes.docx') },
      ]);
      expect(res.status).toBe(200);
      const [st] = await waitForStatus(t, 'ctx', ['broken'], ['errored']);
      expect(st).toMatchObject({ indexing_status: 'errored', success: false, error_code: expect.any(String) });
      expect(st.error_code).toMatch(/CORRUPT_FILE|UNSUPPORTED_FORMAT/);
      expect(st.message).toBeTruthy();
      expect(st.error_message).toBe(st.message);
      const single = await t.request('GET', '/context/status?database=ctx&id=broken');
      expect(single.body.data).toMatchObject({ id: 'broken', indexing_status: 'errored', error_code: st.error_code });
    });

    it('app_knowledge accepts one object or an array; a malformed ACL principal rejects the whole request', async () => {
      const bad = await postMultipart(t, '/context/ingest', {
        type: 'knowledge',
        database: 'ctx',
        app_knowledge: JSON.stringify([{ id: 'a1', content: { text: 'x' } }, { id: 'a2', content: { text: 'y' }, acl: ['not a principal'] }]),
      });
      expect(bad.status).toBe(400);
      expect((await t.request('GET', '/context/status?database=ctx&ids=a1')).body.data.statuses[0].indexing_status).toBe('not_found');
      const ok = await postMultipart(t, '/context/ingest', {
        type: 'knowledge',
        database: 'ctx',
        app_knowledge: JSON.stringify([{ id: 'a1', app_kind: 'message', app_provider: 'slack', content: { text: 'x' }, acl: ['Bob@Corp.io', 'group:slack:eng'] }]),
      });
      expect(ok.status).toBe(200);
      const [row] = await t.ds.query(`SELECT acl FROM rm_items WHERE item_id = 'a1'`);
      expect(row.acl).toEqual(['group:slack:eng', 'user_email:bob@corp.io']);
    });

    it('upload limits answer 413 with a clear code', async () => {
      const big = Buffer.alloc(51 * 1024 * 1024, 'a');
      const res = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'ctx' }, [{ filename: 'big.txt', contentType: 'text/plain', content: big }]);
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    });
  });

  describe('scope and aliases', () => {
    it('deprecated tenant_id/sub_tenant_id in multipart fields and query strings; the first collection is created implicitly', async () => {
      const res = await postMultipart(t, '/context/ingest', { type: 'memory', tenant_id: 'ctx', sub_tenant_id: 'user-42', memories: JSON.stringify([{ id: 'scoped', text: 'Collections keep users apart.' }]) });
      expect(res.status).toBe(200);
      expect(res.body.meta.deprecation.map((d: any) => d.deprecated_field).sort()).toEqual(['sub_tenant_id', 'tenant_id']);
      const colls = await t.request('GET', '/databases/collections?database=ctx');
      expect(colls.body.data.collections.map((c: any) => c.collection)).toEqual(expect.arrayContaining(['default', 'user-42']));
      await waitForStatus(t, 'ctx', ['scoped'], ['completed'], 30_000, 'user-42');
      const st = await t.request('GET', '/context/status?tenant_id=ctx&sub_tenant_id=user-42&id=scoped');
      expect(st.body.data.indexing_status).toBe('completed');
      expect(st.body.meta.deprecation).toHaveLength(2);
      const inDefault = await t.request('POST', '/query', { body: { database: 'ctx', query: 'collections keep users apart', type: 'memory' } });
      expect(ids(inDefault)).not.toContain('scoped');
      const inUser = await t.request('POST', '/query', { body: { database: 'ctx', collection: 'user-42', query: 'collections keep users apart', type: 'memory' } });
      expect(ids(inUser)).toEqual(['scoped']);
      const spanning = await t.request('POST', '/query', { body: { database: 'ctx', sub_tenant_ids: ['default', 'user-42'], query: 'collections keep users apart', type: 'memory' } });
      expect(ids(spanning)).toContain('scoped');
      expect(spanning.body.meta.deprecation.map((d: any) => d.deprecated_field)).toContain('sub_tenant_ids');
    });

    it('operator requires query_by text; alpha outside 0..1 is 400; max_results defaults to 10 and bounds the result', async () => {
      expect((await t.request('POST', '/query', { body: { database: 'ctx', query: 'x', operator: 'and' } })).status).toBe(400);
      expect((await t.request('POST', '/query', { body: { database: 'ctx', query: 'x', alpha: 2 } })).status).toBe(400);
      expect((await t.request('POST', '/query', { body: { database: 'ctx', query: 'x', max_results: 101 } })).status).toBe(400);
      expect((await t.request('POST', '/query', { body: { database: 'ctx', query: 'x', max_results: 0 } })).status).toBe(400);
      // Twelve memories that all match, alone in their collection.
      const many = Array.from({ length: 12 }, (_, i) => ({ id: `lantern-${i}`, text: `Lantern festival note number ${i}: the lanterns go up at dusk.` }));
      await ingestMemories(t, 'ctx', many, { collection: 'lanterns' });
      await waitForStatus(t, 'ctx', many.map((m) => m.id), ['completed'], 30_000, 'lanterns');
      const query = (extra: Record<string, unknown> = {}) => t.request('POST', '/query', { body: { database: 'ctx', collection: 'lanterns', query: 'lantern festival', type: 'memory', ...extra } });
      const all = await query({ max_results: 12 });
      expect(new Set(ids(all)).size).toBe(12);
      expect(ids(await query())).toHaveLength(10);
      expect(ids(await query())).toEqual(ids(all).slice(0, 10));
      expect(ids(await query({ max_results: 1 }))).toEqual(ids(all).slice(0, 1));
      expect(ids(await query({ max_results: 100 }))).toHaveLength(12);
    });
  });

  describe('list, edit, delete, stats', () => {
    it('PATCH metadata edits only the fields sent and is visible to the next query', async () => {
      await ingestMemories(t, 'ctx', [{ id: 'edit', text: 'Budget approvals go through the finance committee.', metadata: JSON.stringify({ team: 'old' }) }]);
      await waitForStatus(t, 'ctx', ['edit']);
      const res = await t.request('PATCH', '/context/edit/metadata', { body: { database: 'ctx', metadata: { team: 'new' }, additional_metadata: { reviewed: true } } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: 'edit', metadata: { team: 'new' }, additional_metadata: { reviewed: true }, title: null });
      const q = await t.request('POST', '/query', { body: { database: 'ctx', query: 'budget approvals finance committee', metadata_filters: { team: 'new' } } });
      expect(ids(q)).toContain('edit');
      const old = await t.request('POST', '/query', { body: { database: 'ctx', query: 'budget approvals finance committee', metadata_filters: { team: 'old' } } });
      expect(ids(old)).not.toContain('edit');
      expect((await t.request('PATCH', '/context/edit/metadata', { body: { database: 'ctx', metadata: { colour: 'x' } } })).status).toBe(400);
      expect((await t.request('PATCH', '/context/nope/metadata', { body: { database: 'ctx', title: 'x' } })).status).toBe(404);
      expect((await t.request('PATCH', '/context/edit/metadata', { body: { database: 'ctx', bogus: 1 } })).status).toBe(400);
    });

    it('PATCH acl alone is valid: a list replaces it, [] revokes, absent leaves it', async () => {
      await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'ctx', app_knowledge: JSON.stringify({ id: 'doc-acl', content: { text: 'Salary bands for engineering levels.' }, acl: ['ann@corp.io'] }) });
      await waitForStatus(t, 'ctx', ['doc-acl']);
      const asAnn = () => t.request('POST', '/query', { body: { database: 'ctx', query: 'salary bands engineering', acl: ['ann@corp.io'] } });
      const asBob = () => t.request('POST', '/query', { body: { database: 'ctx', query: 'salary bands engineering', acl: ['bob@corp.io'] } });
      expect(ids(await asAnn())).toContain('doc-acl');
      expect(ids(await asBob())).not.toContain('doc-acl');
      const replaced = await t.request('PATCH', '/context/doc-acl/metadata', { body: { database: 'ctx', acl: ['bob@corp.io'] } });
      expect(replaced.body.data.acl).toEqual(['user_email:bob@corp.io']);
      expect(ids(await asBob())).toContain('doc-acl');
      expect(ids(await asAnn())).not.toContain('doc-acl');
      const other = await t.request('PATCH', '/context/doc-acl/metadata', { body: { database: 'ctx', title: 'Bands' } });
      expect(other.body.data.acl).toEqual(['user_email:bob@corp.io']);
      const revoked = await t.request('PATCH', '/context/doc-acl/metadata', { body: { database: 'ctx', acl: [] } });
      expect(revoked.body.data.acl).toEqual(['__private__']);
      expect(ids(await asBob())).not.toContain('doc-acl');
      const events = (await t.store.readAll()).filter((e) => e.type === 'AclChanged').filter((e) => e.data.itemId === 'doc-acl');
      expect(events.map((e) => e.data.acl)).toEqual([['user_email:bob@corp.io'], ['__private__']]);
    });

    it('PATCH takes database and collection in the query string too; a body that changes nothing is a no-op answering the item', async () => {
      await ingestMemories(t, 'ctx', [{ id: 'scoped-edit', text: 'Parking permits renew every March.', metadata: JSON.stringify({ team: 'ops' }) }], { collection: 'facilities' });
      await waitForStatus(t, 'ctx', ['scoped-edit'], ['completed'], 30_000, 'facilities');
      const eventsOf = async () => (await t.store.readAll()).filter((e) => 'itemId' in e.data && e.data.itemId === 'scoped-edit').length;

      // Only acl in the body; database and collection in the query string.
      const acl = await t.request('PATCH', '/context/scoped-edit/metadata?database=ctx&collection=facilities', { body: { acl: ['Ann@Corp.io'] } });
      expect([acl.status, acl.body.data]).toEqual([200, expect.objectContaining({ id: 'scoped-edit', collection: 'facilities', acl: ['user_email:ann@corp.io'] })]);
      expect(acl.body.meta).toMatchObject({ database: 'ctx', collection: 'facilities' });
      // The deprecated names work there too; the body may name the same scope.
      const title = await t.request('PATCH', '/context/scoped-edit/metadata?tenant_id=ctx&sub_tenant_id=facilities', { body: { database: 'ctx', title: 'Permits' } });
      expect([title.status, title.body.data.title]).toEqual([200, 'Permits']);
      expect(title.body.meta.deprecation.map((d: any) => d.deprecated_field).sort()).toEqual(['sub_tenant_id', 'tenant_id']);
      // Two different targets: 400, nothing changed.
      const twice = await t.request('PATCH', '/context/scoped-edit/metadata?database=ctx&collection=facilities', { body: { collection: 'default', title: 'x' } });
      expect([twice.status, twice.body.error.code]).toEqual([400, 'INVALID_INPUT']);
      expect((await t.request('PATCH', '/context/scoped-edit/metadata?database=ctx&collection=facilities&bogus=1', { body: { title: 'x' } })).status).toBe(400);

      // Nothing to change: 200 with the item as it is, and nothing appended.
      const before = await eventsOf();
      const empty = await t.request('PATCH', '/context/scoped-edit/metadata?database=ctx&collection=facilities', { body: {} });
      expect([empty.status, empty.body.success, empty.body.data]).toEqual([200, true, expect.objectContaining({ id: 'scoped-edit', title: 'Permits', metadata: { team: 'ops' }, acl: ['user_email:ann@corp.io'] })]);
      const bodiless = await t.request('PATCH', '/context/scoped-edit/metadata?database=ctx&collection=facilities');
      expect([bodiless.status, bodiless.body.data.id]).toEqual([200, 'scoped-edit']);
      const same = await t.request('PATCH', '/context/scoped-edit/metadata?database=ctx&collection=facilities', { body: { acl: ['ann@corp.io'], metadata: { team: 'ops' }, title: 'Permits' } });
      expect([same.status, same.body.data.acl, same.body.data.updated_at]).toEqual([200, ['user_email:ann@corp.io'], title.body.data.updated_at]);
      expect(await eventsOf()).toBe(before);
      // Still 404 for an item that is not there, and 400 for a field that is not editable.
      expect((await t.request('PATCH', '/context/scoped-edit/metadata?database=ctx', { body: {} })).status).toBe(404);
      expect((await t.request('PATCH', '/context/scoped-edit/metadata?database=ctx&collection=facilities', { body: { colour: 'x' } })).status).toBe(400);
    });

    it('/context/list pages memories and knowledge with the SDK shapes', async () => {
      const mem = await t.request('POST', '/context/list', { body: { database: 'ctx', type: 'memory', page: 1, page_size: 2 } });
      expect(mem.status).toBe(200);
      expect(mem.body.data.user_memories).toHaveLength(2);
      expect(mem.body.data.user_memories[0]).toEqual(expect.objectContaining({ memory_id: expect.any(String), memory_content: expect.any(String) }));
      expect(mem.body.data.pagination).toMatchObject({ page: 1, page_size: 2, has_previous: false });
      expect(mem.body.data.pagination.total).toBeGreaterThan(2);
      const kn = await t.request('POST', '/context/list', { body: { database: 'ctx', type: 'knowledge', include_fields: ['content'], ids: ['f-sample.txt'] } });
      expect(kn.body.data.sources).toHaveLength(1);
      expect(kn.body.data.sources[0]).toMatchObject({ id: 'f-sample.txt', type: 'knowledge', source_type: 'file' });
      expect(typeof kn.body.data.sources[0].content).toBe('string');
      const filtered = await t.request('POST', '/context/list', { body: { database: 'ctx', type: 'memory', filters: { tenant_metadata: { team: 'a' } } } });
      expect(filtered.body.data.user_memories.map((m: any) => m.memory_id)).toEqual(['o']);
      const acl = await t.request('POST', '/context/list', { body: { database: 'ctx', type: 'knowledge', ids: ['a1'], acl: ['eve@else.io'] } });
      expect(acl.body.data.sources).toEqual([]);
      expect((await t.request('POST', '/context/list', { body: { database: 'ctx', page_size: 1000 } })).status).toBe(400);
    });

    it('DELETE /context removes items from status, list and query', async () => {
      await ingestMemories(t, 'ctx', [{ id: 'gone', text: 'The secret ingredient is cardamom.' }]);
      await waitForStatus(t, 'ctx', ['gone']);
      const del = await t.request('DELETE', '/context', { body: { database: 'ctx', ids: ['gone', 'never-was'], type: 'memory' } });
      expect(del.status).toBe(200);
      expect(del.body.data).toMatchObject({ deleted_count: 1, results: [{ id: 'gone', deleted: true }, { id: 'never-was', deleted: false }] });
      expect((await t.request('GET', '/context/status?database=ctx&ids=gone')).body.data.statuses[0].indexing_status).toBe('not_found');
      expect(ids(await t.request('POST', '/query', { body: { database: 'ctx', query: 'secret ingredient cardamom' } }))).not.toContain('gone');
    });

    it('meta.source_type names the type of the source a response is about, when it is about exactly one', async () => {
      const st = (res: any) => [res.status, res.body.meta.source_type];
      const one = await ingestMemories(t, 'ctx', [{ id: 'st-mem', text: 'Typed sources: a memory about kangaroos.' }]);
      expect(st(one)).toEqual([200, 'memory']);
      const app = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'ctx', app_knowledge: JSON.stringify({ id: 'st-app', app_kind: 'message', app_provider: 'slack', content: { text: 'Typed sources: a message about kangaroos.' } }) });
      expect(st(app)).toEqual([200, 'app:slack']);
      const file = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'ctx', document_metadata: JSON.stringify([{ id: 'st-file' }]) }, [{ filename: 'k.txt', contentType: 'text/plain', content: 'Typed sources: a file about kangaroos and koalas.' }]);
      expect(st(file)).toEqual([200, 'file']);
      const two = await ingestMemories(t, 'ctx', [{ id: 'st-a', text: 'One of two.' }, { id: 'st-b', text: 'Two of two.' }]);
      expect(st(two)).toEqual([200, undefined]);
      await waitForStatus(t, 'ctx', ['st-mem', 'st-app', 'st-file', 'st-a', 'st-b']);

      expect(st(await t.request('GET', '/context/status?database=ctx&id=st-app'))).toEqual([200, 'app:slack']);
      expect((await t.request('GET', '/context/status?database=ctx&id=st-app')).body.data.source_type).toBe('app:slack');
      expect(st(await t.request('GET', '/context/status?database=ctx&ids=st-a&ids=st-b'))).toEqual([200, undefined]);
      expect(st(await t.request('POST', '/ingestion/verify_processing', { body: { tenant_id: 'ctx', ids: ['st-file'] } }))).toEqual([200, 'file']);
      expect(st(await t.request('GET', '/context/inspect?database=ctx&id=st-file'))).toEqual([200, 'file']);
      expect(st(await t.request('PATCH', '/context/st-mem/metadata?database=ctx', { body: { title: 'Kangaroos' } }))).toEqual([200, 'memory']);
      expect(st(await t.request('GET', '/context/graph/entities?database=ctx&id=st-app'))).toEqual([200, 'app:slack']);
      expect(st(await t.request('GET', '/context/relations?database=ctx&id=st-file'))).toEqual([200, 'file']);
      // About several sources, or none in particular: absent.
      expect(st(await t.request('GET', '/context/relations?database=ctx'))).toEqual([200, undefined]);
      expect(st(await t.request('POST', '/query', { body: { database: 'ctx', query: 'kangaroos' } }))).toEqual([200, undefined]);
      expect(st(await t.request('POST', '/context/list', { body: { database: 'ctx', type: 'memory' } }))).toEqual([200, undefined]);
      expect(st(await t.request('DELETE', '/context', { body: { database: 'ctx', ids: ['st-a'] } }))).toEqual([200, 'memory']);
      expect(st(await t.request('DELETE', '/context', { body: { database: 'ctx', ids: ['st-b', 'st-never'] } }))).toEqual([200, undefined]);
      // A failure carries none.
      expect(st(await t.request('GET', '/context/inspect?database=ctx&id=st-never'))).toEqual([404, undefined]);
    });

    it('stats count items by store and status, chunks, bytes and growth; /tenants/stats has the SDK shape', async () => {
      const s = await t.request('GET', '/databases/stats?database=ctx');
      expect(s.status).toBe(200);
      expect(s.body.data.items.memory.total).toBeGreaterThan(3);
      expect(s.body.data.items.knowledge.by_status.errored).toBeGreaterThanOrEqual(1);
      expect(s.body.data.chunks.total).toBeGreaterThan(5);
      expect(s.body.data.bytes).toBeGreaterThan(100);
      expect(s.body.data.growth[0]).toMatchObject({ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), items: expect.any(Number) });
      // Everything here was created within the 30 UTC days growth covers: its days add up to the item total.
      expect(s.body.data.growth.reduce((sum: number, g: { items: number }) => sum + g.items, 0)).toBe(s.body.data.items.total);
      const legacy = await t.request('GET', '/tenants/stats?tenant_id=ctx');
      expect(legacy.body.data).toMatchObject({ tenant_id: 'ctx', knowledge_collection: { row_count: expect.any(Number), dimensions: 100 }, memory_collection: { dimensions: 100 } });
    });
  });

  describe('legacy paths', () => {
    it('upload_knowledge (multipart, JSON-string fields) returns source ids queued; verify_processing reports several; add_memory and recall work', async () => {
      const up = await postMultipart(t, '/ingestion/upload_knowledge', { tenant_id: 'ctx', app_knowledge: JSON.stringify([{ id: 'leg-1', content: { text: 'Legacy ingestion of the narwhal report.' } }]) });
      expect(up.status).toBe(200);
      expect(up.body).toMatchObject({ success: true, results: [{ source_id: 'leg-1', id: 'leg-1', status: 'queued' }] });
      const dup = await postMultipart(t, '/ingestion/upload_knowledge', { tenant_id: 'ctx', upsert: 'false', app_knowledge: JSON.stringify([{ id: 'leg-1', content: { text: 'again' } }]) });
      expect(dup.body.results[0]).toMatchObject({ status: 'failed', error_code: 'ITEM_EXISTS' });
      const add = await t.request('POST', '/memories/add_memory', { body: { tenant_id: 'ctx', memories: [{ id: 'leg-m', text: 'I prefer window seats on long flights.', infer: true }] } });
      expect(add.status).toBe(200);
      expect(add.body.results[0]).toMatchObject({ id: 'leg-m', status: 'queued' });
      await waitForStatus(t, 'ctx', ['leg-1', 'leg-m', 'leg-m::inferred:0']);
      const verify = await t.request('POST', '/ingestion/verify_processing', { body: { tenant_id: 'ctx', file_ids: ['leg-1', 'leg-m', 'nope'] } });
      expect(verify.status).toBe(200);
      expect(verify.body.statuses.map((s: any) => s.indexing_status)).toEqual(['completed', 'completed', 'not_found']);
      const recall = await t.request('POST', '/recall/full_recall', { body: { tenant_id: 'ctx', query: 'narwhal report' } });
      expect(recall.status).toBe(200);
      expect(recall.body.chunks[0].id).toBe('leg-1');
      const prefs = await t.request('POST', '/recall/recall_preferences', { body: { tenant_id: 'ctx', query: 'seat preference on flights' } });
      expect(prefs.body.chunks[0]).toMatchObject({ id: 'leg-m::inferred:0', chunk_content: 'The user prefers window seats on long flights.' });
      expect(prefs.body.chunks.every((c: any) => c.store === 'memory' && c.source_type === 'inferred_memory')).toBe(true);
      // The original flat shape, plus the meta every response carries: request id (= X-Request-ID), version, the
      // deprecation notices of the path and of tenant_id.
      for (const res of [up, add, verify, recall, prefs]) {
        expect(res.body.meta).toMatchObject({ request_id: res.headers['x-request-id'], api_version: '2.0.1', latency_ms: expect.any(Number) });
        expect(res.body).not.toHaveProperty('data');
        expect(res.body.meta.deprecation.map((d: any) => d.deprecated_field)).toContain('tenant_id');
      }
      expect(up.body.meta.deprecation.map((d: any) => d.deprecated_field)).toContain('/ingestion/upload_knowledge');
    });
  });
});
