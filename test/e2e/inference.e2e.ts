import { createServer, type Server } from 'node:http';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, waitForStatus } from '../support/ingest';

async function derivedOf(t: TestApp, sourceId: string) {
  return t.ds.query(`SELECT item_id, status, additional_metadata FROM rm_items WHERE additional_metadata->>'derived_from' = $1 ORDER BY item_id`, [sourceId]);
}

async function waitDerived(t: TestApp, sourceId: string, n: number) {
  for (let i = 0; i < 300; i++) {
    const rows = await derivedOf(t, sourceId);
    if (rows.length === n && rows.every((r: any) => r.status === 'completed')) return rows;
    await new Promise((r) => setTimeout(r, 30));
  }
  throw new Error(`derived memories of ${sourceId} did not complete: ${JSON.stringify(await derivedOf(t, sourceId))}`);
}

describe('memory inference (offline rules)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('infer');
    await t.createDatabase('inf');
  });
  afterAll(async () => {
    await t.close();
  });

  it('infer: true derives preferences/traits/facts as memories linked to their source; infer: false stores exactly as sent', async () => {
    const res = await ingestMemories(t, 'inf', [
      { id: 'dlg', user_assistant_pairs: [{ user: 'I prefer aisle seats on short flights. I never check luggage.', assistant: 'Got it.' }], infer: true, user_name: 'Ann' },
      { id: 'raw', text: 'I prefer tea over coffee.', infer: false },
    ]);
    expect(res.body.data.results.map((r: any) => r.infer)).toEqual([true, false]);
    await waitForStatus(t, 'inf', ['dlg', 'raw']);
    const derived = await waitDerived(t, 'dlg', 2);
    expect(derived.map((d: any) => d.additional_metadata.inferred_kind)).toEqual(['preference', 'trait']);
    expect(await derivedOf(t, 'raw')).toEqual([]);
    const ev = (await t.store.readAll()).filter((e) => e.type === 'InferenceCompleted');
    expect(ev).toHaveLength(1);
    expect(ev[0].data).toMatchObject({ model: 'rules-v1', derivedIds: ['dlg::inferred:0', 'dlg::inferred:1'] });
    const list = await t.request('POST', '/context/list', { body: { database: 'inf', type: 'memory' } });
    const dlg = list.body.data.user_memories.find((m: any) => m.memory_id === 'dlg');
    expect(dlg.inferred_content).toBe('Ann prefers aisle seats on short flights.\nAnn never checks luggage.');
    expect(list.body.data.user_memories.map((m: any) => m.memory_id).sort()).toEqual(['dlg', 'raw']);
  });

  it('/recall/recall_preferences returns the inferred preferences', async () => {
    const res = await t.request('POST', '/recall/recall_preferences', { body: { tenant_id: 'inf', query: 'seat preference when flying' } });
    expect(res.status).toBe(200);
    expect(res.body.chunks[0]).toMatchObject({ chunk_content: 'Ann prefers aisle seats on short flights.', source_type: 'inferred_memory' });
    expect(res.body.chunks.every((c: any) => c.additional_metadata.derived_from === 'dlg')).toBe(true);
  });

  it('a derived memory is visible only to callers who may see its source, and goes away with it', async () => {
    await t.request('PATCH', '/context/dlg/metadata', { body: { database: 'inf', acl: ['ann@corp.io'] } });
    const bob = await t.request('POST', '/query', { body: { database: 'inf', query: 'aisle seats short flights', acl: ['bob@corp.io'] } });
    expect(bob.body.data.chunks.map((c: any) => c.id)).not.toEqual(expect.arrayContaining(['dlg']));
    expect(bob.body.data.chunks.map((c: any) => c.id).filter((id: string) => id.startsWith('dlg'))).toEqual([]);
    const ann = await t.request('POST', '/query', { body: { database: 'inf', query: 'aisle seats short flights', acl: ['ann@corp.io'] } });
    expect(ann.body.data.chunks.map((c: any) => c.id)).toEqual(expect.arrayContaining(['dlg', 'dlg::inferred:0']));
    await t.request('DELETE', '/context', { body: { database: 'inf', ids: ['dlg'] } });
    for (let i = 0; i < 200 && (await derivedOf(t, 'dlg')).length; i++) await new Promise((r) => setTimeout(r, 30));
    expect(await derivedOf(t, 'dlg')).toEqual([]);
    const after = await t.request('POST', '/query', { body: { database: 'inf', query: 'aisle seats short flights' } });
    expect(after.body.data.chunks.map((c: any) => c.id)).not.toContain('dlg::inferred:0');
  });
});

describe('memory inference through an OpenAI-compatible chat endpoint (fake server on 127.0.0.1)', () => {
  let t: TestApp;
  let server: Server;
  let calls = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        calls++;
        const msg = JSON.parse(body).messages[1].content as string;
        const facts = msg.includes('cats') ? [{ kind: 'preference', text: 'Zoe is fond of cats.' }] : [];
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { content: JSON.stringify({ facts }) } }] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t = await startTestApp('inferllm', { llm: { baseUrl: `http://127.0.0.1:${(server.address() as any).port}`, model: 'fake-1' } });
    await t.createDatabase('llm');
  });
  afterAll(async () => {
    await t.close();
    await new Promise((r) => server.close(r));
  });

  it('uses the model when configured and records what it produced (model id in the event)', async () => {
    await ingestMemories(t, 'llm', [{ id: 'z', text: 'honestly cats are the best company', infer: true, user_name: 'Zoe' }]);
    await waitForStatus(t, 'llm', ['z']);
    const [d] = await waitDerived(t, 'z', 1);
    expect(d.additional_metadata).toMatchObject({ inferred_kind: 'preference', inference_model: 'openai-chat:fake-1' });
    expect(calls).toBe(1);
    const ev = (await t.store.readAll()).find((e) => e.type === 'InferenceCompleted');
    expect(ev!.data.model).toBe('openai-chat:fake-1');
    // A rebuild replays the recorded result: the model is not called again.
    for (const p of t.runner.readModels) await t.runner.rebuild(p.name);
    expect(calls).toBe(1);
    expect((await derivedOf(t, 'z')).length).toBe(1);
  });
});
