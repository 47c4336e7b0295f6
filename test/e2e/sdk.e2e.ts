import { HydraDBClient } from '@hydradb/sdk';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The original API's official SDK (@hydradb/sdk 2.0.0), unchanged, against our service: every typed method, and
 * client.fetch() for the spec endpoints it does not wrap. Assertions are on results, not just on the absence of errors.
 */
describe('@hydradb/sdk 2.0.0 against the service', () => {
  let t: TestApp;
  let client: HydraDBClient;
  let baseUrl: string;

  beforeAll(async () => {
    t = await startTestApp('sdk');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as any).port}`;
    client = new HydraDBClient({ baseUrl, token: t.key, maxRetries: 0, timeoutInSeconds: 30 });
  });
  afterAll(async () => {
    await t.close();
  });

  const waitCompleted = async (tenantId: string, ids: string[], subTenantId?: string) => {
    for (let i = 0; i < 400; i++) {
      const res: any = await client.context.status({ tenantId, ids, ...(subTenantId ? { subTenantId } : {}) } as any);
      const statuses = res.data.statuses;
      if (statuses.length === ids.length && statuses.every((s: any) => s.indexingStatus === 'completed')) return statuses;
      await new Promise((r) => setTimeout(r, 30));
    }
    throw new Error(`not completed: ${ids}`);
  };

  it('tenants: create (with a metadata schema), status with infra flags, list, sub-tenants, stats', async () => {
    const created: any = await client.tenants.create({ tenantId: 'acme', tenantMetadataSchema: [{ name: 'team', dataType: 'VARCHAR', maxLength: 64 } as any, { name: 'year', dataType: 'INT64' } as any] });
    expect(created.success).toBe(true);
    expect(created.data).toMatchObject({ tenantId: 'acme' });
    expect(created.meta.deprecation.map((d: any) => d.deprecated_field ?? d.deprecatedField)).toContain('tenant_id');
    let status: any;
    for (let i = 0; i < 200; i++) {
      status = await client.tenants.status({ tenantId: 'acme' });
      if (status.data.infra.readyForIngestion ?? status.data.infra.ready_for_ingestion) break;
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(status.data).toMatchObject({ tenantId: 'acme', orgId: 'default' });
    expect(status.data.infra).toMatchObject({ schedulerStatus: true, graphStatus: true, vectorstoreStatus: { knowledge: true, memories: true } });
    const list: any = await client.tenants.list();
    expect(list.data.tenantIds).toContain('acme');
  });

  it('context.ingest: memories (JSON string), documents before document_metadata, app_knowledge as one object', async () => {
    const mem: any = await client.context.ingest({
      type: 'memory',
      tenantId: 'acme',
      subTenantId: 'user-1',
      memories: JSON.stringify([
        { id: 'pref', text: 'I prefer oat milk in my coffee.', infer: true, user_name: 'Ann', metadata: JSON.stringify({ team: 'core', year: 2025 }) },
        { id: 'linked', text: 'The coffee machine is on the third floor.' },
        { id: 'hub', text: 'Office coffee rules and etiquette.', relations: { ids: ['linked'] } },
      ]),
    });
    expect(mem.data).toMatchObject({ successCount: 3, failedCount: 0 });
    expect(mem.data.results.map((r: any) => [r.id, r.status])).toEqual([['pref', 'queued'], ['linked', 'queued'], ['hub', 'queued']]);

    const docs: any = await client.context.ingest({
      type: 'knowledge',
      tenantId: 'acme',
      documents: [Buffer.from('# Runbook\n\nRestart the flux capacitor with care.')] as any,
      documentMetadata: JSON.stringify([{ id: 'runbook', metadata: { team: 'ops' }, additional_metadata: { owner: 'sre' } }]),
    });
    expect(docs.data.results[0]).toMatchObject({ id: 'runbook', status: 'queued' });
    const app: any = await client.context.ingest({ type: 'knowledge', tenantId: 'acme', appKnowledge: JSON.stringify({ id: 'msg-1', app_kind: 'message', app_provider: 'slack', content: { text: 'Lunch is at noon in the atrium.' } }) });
    expect(app.data.results[0]).toMatchObject({ id: 'msg-1', status: 'queued' });

    const st = await waitCompleted('acme', ['pref', 'linked', 'hub'], 'user-1');
    expect(st.map((s: any) => s.id)).toEqual(['pref', 'linked', 'hub']);
    await waitCompleted('acme', ['runbook', 'msg-1']);
  });

  it('tenants.subTenants and tenants.stats', async () => {
    const subs: any = await client.tenants.subTenants({ tenantId: 'acme' });
    expect(subs.data.subTenantIds.sort()).toEqual(['default', 'user-1']);
    const stats: any = await client.tenants.stats({ tenantId: 'acme' });
    expect(stats.data).toMatchObject({ tenantId: 'acme', knowledgeCollection: { rowCount: 2, dimensions: 100 }, memoryCollection: { dimensions: 100 } });
    expect(stats.data.memoryCollection.rowCount).toBeGreaterThanOrEqual(3);
  });

  it('percent-encoded path parameters reach the item', async () => {
    await client.context.ingest({ type: 'memory', tenantId: 'acme', memories: JSON.stringify([{ id: 'a/b c', text: 'An id with a slash and a space.' }]) });
    await waitCompleted('acme', ['a/b c']);
    const res = await client.fetch(`/context/${encodeURIComponent('a/b c')}/metadata`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ tenant_id: 'acme', title: 'slashed' }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data).toMatchObject({ id: 'a/b c', title: 'slashed' });
  });

  it('context.status with a single id', async () => {
    const one: any = await client.context.status({ tenantId: 'acme', id: 'runbook' } as any);
    expect(one.data.statuses).toEqual([expect.objectContaining({ id: 'runbook', indexingStatus: 'completed' })]);
  });

  it('query: chunk shape, sources, max_results, alpha, query_by text with operator, metadata filters, type', async () => {
    const q: any = await client.query({ tenantId: 'acme', query: 'how do I restart the flux capacitor', maxResults: 3, type: 'knowledge' });
    expect(q.success).toBe(true);
    const c = q.data.chunks[0];
    expect(c).toMatchObject({ id: 'runbook', sourceType: 'file', chunkContent: expect.stringContaining('flux capacitor') });
    expect(typeof c.chunkUuid).toBe('string');
    expect(typeof c.relevancyScore).toBe('number');
    expect(c.metadata).toEqual({ team: 'ops' });
    expect(q.data.sources[0]).toMatchObject({ id: 'runbook' });
    expect(q.data.chunks.length).toBeLessThanOrEqual(3);
    const text: any = await client.query({ tenantId: 'acme', query: 'atrium noon', queryBy: 'text', operator: 'and' });
    expect(text.data.chunks.map((x: any) => x.id)).toEqual(['msg-1']);
    const none: any = await client.query({ tenantId: 'acme', query: 'atrium pizza', queryBy: 'text', operator: 'and' });
    expect(none.data.chunks).toEqual([]);
    const filtered: any = await client.query({ tenantId: 'acme', subTenantId: 'user-1', query: 'milk in coffee', metadataFilters: { team: 'core' }, type: 'memory', alpha: 'auto' });
    expect(filtered.data.chunks[0].id).toBe('pref');
    const wrong: any = await client.query({ tenantId: 'acme', subTenantId: 'user-1', query: 'milk in coffee', metadataFilters: { team: 'nobody' }, type: 'memory', alpha: 0.7 });
    expect(wrong.data.chunks.map((x: any) => x.id)).not.toContain('pref');
  });

  it('query thinking mode returns forceful relations in additional_context keyed by chunk_uuid', async () => {
    const q: any = await client.query({ tenantId: 'acme', subTenantId: 'user-1', query: 'office coffee rules and etiquette', mode: 'thinking', type: 'memory', maxResults: 1, queryForcefulRelations: true, graphContext: true });
    expect(q.data.chunks[0].id).toBe('hub');
    const extra = q.data.chunks[0].extraContextIds;
    expect(extra).toHaveLength(1);
    expect(q.data.additionalContext[extra[0]]).toMatchObject({ id: 'linked' });
    expect(q.data.graphContext).toEqual(expect.objectContaining({ queryPaths: expect.any(Array), chunkRelations: expect.any(Array) }));
  });

  it('context.list: memories with inferred content and pagination; knowledge sources', async () => {
    let mem: any;
    for (let i = 0; i < 200; i++) {
      mem = await client.context.list({ tenantId: 'acme', subTenantId: 'user-1', type: 'memory', page: 1, pageSize: 2 });
      // The SDK parses this union response as its first member (knowledge), so memory fields pass through in snake_case.
      if (mem.data.user_memories.some((m: any) => m.inferred_content)) break;
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(mem.data.user_memories).toHaveLength(2);
    expect(mem.data.pagination).toMatchObject({ page: 1, page_size: 2, total: 3, total_pages: 2, has_next: true, has_previous: false });
    const all: any = await client.context.list({ tenantId: 'acme', subTenantId: 'user-1', type: 'memory', page: 1, pageSize: 10 });
    expect(all.data.user_memories.find((m: any) => m.memory_id === 'pref').inferred_content).toBe('Ann prefers oat milk in my coffee.');
    const kn: any = await client.context.list({ tenantId: 'acme', type: 'knowledge', includeFields: ['content'] });
    expect(kn.data.sources.map((s: any) => s.id).sort()).toEqual(['msg-1', 'runbook']);
  });

  it('context.inspect returns the content', async () => {
    const res: any = await client.context.inspect({ tenantId: 'acme', id: 'msg-1', mode: 'content' } as any);
    expect(res.data).toMatchObject({ id: 'msg-1', content: 'Lunch is at noon in the atrium.', sizeBytes: 31 });
  });

  it('context.inspect mode url gives a presigned URL that serves the content over HTTP without a key', async () => {
    const res: any = await client.context.inspect({ tenantId: 'acme', id: 'msg-1', mode: 'url', expirySeconds: 300 } as any);
    expect(res.data.presignedUrl).toMatch(new RegExp(`^${baseUrl}/context/presigned/`));
    const served = await fetch(res.data.presignedUrl);
    expect([served.status, await served.text()]).toEqual([200, 'Lunch is at noon in the atrium.']);
  });

  it('context.relations returns graph triplets with a cursor', async () => {
    const res: any = await client.context.relations({ tenantId: 'acme', limit: 1 } as any);
    expect(res.data.relations).toHaveLength(1);
    expect(res.data.relations[0].source).toEqual(expect.objectContaining({ name: expect.any(String), entityId: expect.any(String) }));
    expect(typeof res.data.nextCursor === 'number' || res.data.nextCursor === null).toBe(true);
  });

  it('context.delete removes items', async () => {
    const res: any = await client.context.delete({ tenantId: 'acme', ids: ['msg-1'] } as any);
    expect(res.data).toMatchObject({ deletedCount: 1, user_memory_deleted: true });
    const q: any = await client.query({ tenantId: 'acme', query: 'atrium noon', queryBy: 'text' });
    expect(q.data.chunks.map((x: any) => x.id)).not.toContain('msg-1');
  });

  it('client.fetch reaches the endpoints the SDK does not wrap: metadata PATCH, /databases, legacy recall', async () => {
    const patch = await client.fetch('/context/runbook/metadata', { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ database: 'acme', metadata: { team: 'platform' } }) });
    expect(patch.status).toBe(200);
    expect(((await patch.json()) as any).data.metadata).toEqual({ team: 'platform' });
    const dbs = await client.fetch('/databases', { method: 'GET' });
    expect(((await dbs.json()) as any).data.databases.map((d: any) => d.database)).toContain('acme');
    const recall = await client.fetch('/recall/full_recall', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ tenant_id: 'acme', query: 'flux capacitor' }) });
    expect(((await recall.json()) as any).chunks[0].id).toBe('runbook');
  });

  it('errors arrive as the SDK typed errors with the envelope body', async () => {
    const bad = new HydraDBClient({ baseUrl, token: 'crs_nope.not-a-real-secret-at-all', maxRetries: 0 });
    await expect(bad.tenants.list()).rejects.toMatchObject({ statusCode: 401, body: expect.objectContaining({ error: expect.objectContaining({ code: 'UNAUTHORIZED' }) }) });
    await expect(client.tenants.status({ tenantId: 'nope' })).rejects.toMatchObject({ statusCode: 404 });
  });

  it('tenants.delete (query string, no body) removes the tenant', async () => {
    await client.tenants.create({ tenantId: 'temp-tenant' });
    const del: any = await client.tenants.delete({ tenantId: 'temp-tenant' });
    expect(del.data).toMatchObject({ tenantId: 'temp-tenant', status: 'deleting' });
    const list: any = await client.tenants.list();
    expect(list.data.tenantIds).not.toContain('temp-tenant');
  });
});
