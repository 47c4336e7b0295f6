import { GraphContextService } from '@crs/api/query/graph-context.service';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, postMultipart, waitForStatus } from '../support/ingest';

const ids = (res: any) => res.body.data.chunks.map((c: any) => c.id);

describe('context graph, thinking mode and forceful relations through HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('graph');
    await t.createDatabase('g');
    await ingestMemories(t, 'g', [
      { id: 't1', text: 'Caroline said, "I adopted a greyhound and named him Zeus."' },
      { id: 't2', text: 'Melanie said, "Zeus loves sprinting along the beach in Porto every morning."' },
      { id: 'd1', text: 'Dogs generally enjoy long walks and playing fetch in the park.' },
      { id: 'd2', text: 'What a dog enjoys depends on its breed and its energy level.' },
      { id: 'd3', text: 'Beaches can be too hot for a dog in the summer afternoon.' },
      { id: 'm1', text: 'The Q3 roadmap prioritizes the billing rewrite.', relations: { ids: ['m2', 'k-linked'] } },
      { id: 'm2', text: 'Owner of the billing rewrite: the payments squad.' },
    ]);
    await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'g', app_knowledge: JSON.stringify([
      { id: 'k-linked', content: { text: 'Knowledge about the billing rewrite.' } },
      { id: 'secret', content: { text: 'Project Nightingale moves the Zurich office to Geneva.' }, acl: ['ann@corp.io'] },
    ]) });
    await waitForStatus(t, 'g', ['t1', 't2', 'd1', 'd2', 'd3', 'm1', 'm2', 'k-linked', 'secret']);
  });
  afterAll(async () => {
    await t.close();
  });

  it('extracts entities and relations into the graph, inspectable per item, per entity and as SDK triplets', async () => {
    const ents = await t.request('GET', '/context/graph/entities?database=g&id=t1');
    expect(ents.status).toBe(200);
    expect(ents.body.data.entities.map((e: any) => e.entity_id)).toEqual(expect.arrayContaining(['caroline', 'zeus']));
    const nb = await t.request('GET', '/context/graph/neighbours?database=g&entity=Caroline');
    expect(nb.body.data.neighbours.map((n: any) => n.entity.entity_id)).toContain('zeus');
    const rel = await t.request('GET', '/context/relations?tenant_id=g&limit=2');
    expect(rel.status).toBe(200);
    expect(rel.body.data).toMatchObject({ success: true, is_truncated: true, next_cursor: 2 });
    expect(rel.body.data.relations[0]).toMatchObject({ source: { name: expect.any(String), type: expect.any(String), entity_id: expect.any(String) }, target: expect.any(Object), chunk_id: expect.any(String) });
    expect(rel.body.data.relations[0].relations[0]).toMatchObject({ canonical_predicate: expect.any(String), raw_predicate: expect.any(String), context: expect.any(String), relationship_id: expect.any(String) });
    const next = await t.request('GET', '/context/relations?tenant_id=g&limit=2&cursor=2');
    expect(next.body.data.relations[0]).not.toEqual(rel.body.data.relations[0]);
  });

  it('thinking mode follows the graph: a chunk sharing no words with the query is found through its entity', async () => {
    const q = { database: 'g', query: "What does Caroline's dog enjoy?", type: 'memory', max_results: 3 };
    const thinking = await t.request('POST', '/query', { body: { ...q, mode: 'thinking' } });
    expect(thinking.status).toBe(200);
    expect(ids(thinking)).toEqual(expect.arrayContaining(['t1', 't2']));
    expect(thinking.body.data.graph_context.query_paths.length).toBeGreaterThan(0);
    const group = Object.values(thinking.body.data.graph_context.chunk_id_to_group_ids)[0];
    expect(group).toEqual([expect.stringMatching(/^g:/)]);
  });

  it('with operator and / phrase, thinking mode brings in no chunk through the graph that lacks the words (it re-ranks the matching ones)', async () => {
    // t2 mentions Zeus but not "adopted": the graph found it for "Caroline's dog" above; here the operator excludes it.
    const and = await t.request('POST', '/query', { body: { database: 'g', query: 'Zeus adopted', type: 'memory', query_by: 'text', operator: 'and', mode: 'thinking' } });
    expect(ids(and)).toEqual(['t1']);
    const phrase = await t.request('POST', '/query', { body: { database: 'g', query: 'named him Zeus', type: 'memory', query_by: 'text', operator: 'phrase', mode: 'thinking' } });
    expect(ids(phrase)).toEqual(['t1']);
    const or = await t.request('POST', '/query', { body: { database: 'g', query: 'Zeus adopted', type: 'memory', query_by: 'text', mode: 'thinking' } });
    expect(ids(or)).toEqual(expect.arrayContaining(['t1', 't2']));
  });

  it('forceful relations come back in additional_context in thinking mode only, within one store', async () => {
    const body = { database: 'g', query: 'Q3 roadmap billing rewrite priorities', type: 'memory', max_results: 1 };
    const thinking = await t.request('POST', '/query', { body: { ...body, mode: 'thinking' } });
    expect(ids(thinking)).toEqual(['m1']);
    const extra = thinking.body.data.chunks[0].extra_context_ids;
    expect(extra).toHaveLength(1); // m2 only: the link to a knowledge id yields nothing
    expect(thinking.body.data.additional_context[extra[0]]).toMatchObject({ id: 'm2', chunk_uuid: extra[0], chunk_content: expect.stringContaining('payments squad') });
    // The log shows what was disclosed, linked chunks included (auditors replay it).
    const recorded = (await t.store.readAll()).filter((e) => e.type === 'QueryRecorded').find((e) => e.data.requestId === thinking.body.meta.request_id);
    expect(recorded!.data.additionalContext).toEqual([{ chunkId: extra[0], itemId: 'm2', linkedFrom: thinking.body.data.chunks[0].chunk_uuid }]);
    const off = await t.request('POST', '/query', { body: { ...body, mode: 'thinking', query_forceful_relations: false } });
    expect(off.body.data.additional_context).toEqual({});
    expect((await t.store.readAll()).find((e) => e.type === 'QueryRecorded' && e.data.requestId === off.body.meta.request_id)!.data).not.toHaveProperty('additionalContext');
    const fast = await t.request('POST', '/query', { body: { ...body, mode: 'fast', query_forceful_relations: true } });
    expect(fast.status).toBe(200);
    expect(fast.body.data.additional_context).toEqual({});
  });

  it('nothing derived from a hidden document reaches the caller: relations, entities, graph context, expansion, linked memories', async () => {
    const asBob = ['bob@corp.io'];
    const rel = await t.request('GET', '/context/relations?database=g&limit=500&acl=bob@corp.io');
    expect(JSON.stringify(rel.body.data)).not.toMatch(/nightingale|zurich|geneva/i);
    const relAnn = await t.request('GET', '/context/relations?database=g&limit=500&acl=ann@corp.io');
    expect(JSON.stringify(relAnn.body.data)).toMatch(/nightingale/i);
    expect((await t.request('GET', '/context/graph/entities?database=g&id=secret&acl=bob@corp.io')).status).toBe(404);
    const nb = await t.request('GET', '/context/graph/neighbours?database=g&entity=Zurich&acl=bob@corp.io');
    expect(nb.body.data.neighbours).toEqual([]);
    for (const mode of ['fast', 'thinking']) {
      const q = await t.request('POST', '/query', { body: { database: 'g', query: 'Where is the Zurich office moving? Project Nightingale', mode, acl: asBob, max_results: 20 } });
      expect(ids(q)).not.toContain('secret');
      expect(JSON.stringify(q.body.data)).not.toMatch(/nightingale|geneva/i);
    }
    // A linked memory the caller may not see is not returned in additional_context.
    await t.request('PATCH', '/context/m2/metadata', { body: { database: 'g', acl: ['ann@corp.io'] } });
    const hidden = await t.request('POST', '/query', { body: { database: 'g', query: 'Q3 roadmap billing rewrite priorities', type: 'memory', mode: 'thinking', max_results: 1, acl: asBob } });
    expect(ids(hidden)).toEqual(['m1']);
    expect(hidden.body.data.additional_context).toEqual({});
    expect(hidden.body.data.chunks[0].extra_context_ids).toEqual([]);
  });
  it('an expired memory leaves the graph endpoints too: relations, entities, neighbours', async () => {
    const accepted = Date.now();
    await ingestMemories(t, 'g', [{ id: 'ttl-graph', text: 'Octavia said, "Project Kingfisher moves the Lisbon team to Madrid."', expiry_time: 4 }]);
    await waitForStatus(t, 'g', ['ttl-graph']);
    const [{ name }] = (await t.request('GET', '/context/graph/entities?database=g&id=ttl-graph')).body.data.entities.filter((e: any) => /kingfisher/i.test(e.name));
    const surfaced = async () => ({
      relations: /kingfisher/i.test(JSON.stringify((await t.request('GET', '/context/relations?database=g&limit=500')).body.data)),
      entities: (await t.request('GET', '/context/graph/entities?database=g&id=ttl-graph')).status,
      neighbours: (await t.request('GET', `/context/graph/neighbours?database=g&entity=${encodeURIComponent(name)}`)).body.data.neighbours.length > 0,
    });
    expect(await surfaced()).toEqual({ relations: true, entities: 200, neighbours: true });
    await new Promise((r) => setTimeout(r, Math.max(0, accepted + 4100 - Date.now())));
    expect(await surfaced()).toEqual({ relations: false, entities: 404, neighbours: false });
  });

  it('graph expansion ranks in Postgres and goes deeper when the best chunks are not in the stores asked', async () => {
    await t.createDatabase('gx');
    // Six knowledge chunks name both entities (the higher score), one memory names only one of them.
    await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'gx', app_knowledge: JSON.stringify(
      [1, 2, 3, 4, 5, 6].map((i) => ({ id: `k${i}`, content: { text: `Report ${i}: Zorblax met Quintor in Lisbon.` } })),
    ) });
    await ingestMemories(t, 'gx', [{ id: 'mz', text: 'Zorblax called yesterday.' }]);
    await waitForStatus(t, 'gx', ['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'mz']);
    const [db] = await t.ds.query(`SELECT id FROM rm_databases WHERE name = 'gx'`);
    const graph = t.app.get(GraphContextService);
    const weights = new Map([['zorblax', 1], ['quintor', 1]]);
    const both = await graph.chunksMentioning(db.id, weights, { stores: ['knowledge', 'memory'] }, 3, 0);
    expect(both.map((c) => c.itemKey)).toHaveLength(3);
    expect(both[0].score).toBeGreaterThan(0);
    // limit 1: the first cut (4 chunks) holds only knowledge chunks, so the memory is found by a deeper one.
    const memory = await graph.chunksMentioning(db.id, weights, { stores: ['memory'] }, 1, 0);
    expect(memory).toHaveLength(1);
    const [mz] = await t.ds.query(`SELECT item_key FROM rm_items WHERE database_id = $1 AND item_id = 'mz'`, [db.id]);
    expect(memory[0]).toMatchObject({ itemKey: mz.item_key, chunkIndex: 0 });
    expect(memory[0].score).toBeLessThan(both[0].score);
    expect(await graph.chunksMentioning(db.id, weights, { stores: ['memory'], collections: ['elsewhere'] }, 1, 0)).toEqual([]);

    // Bounded at 6 chunks: Zorblax (7 chunks) is left out, Quintor (6) still counts, alone.
    const bounded = await graph.chunksMentioning(db.id, weights, { stores: ['knowledge', 'memory'] }, 10, 6);
    expect(bounded).toHaveLength(6);
    for (const c of bounded) expect(c.score).toBeCloseTo(1 / Math.log2(7), 9);
    expect(bounded.map((c) => c.itemKey)).not.toContain(mz.item_key);
    expect(await graph.chunksMentioning(db.id, weights, { stores: ['memory'] }, 1, 6)).toEqual([]);
    // At 7 both count again, as without a bound.
    expect(await graph.chunksMentioning(db.id, weights, { stores: ['memory'] }, 1, 7)).toEqual(memory);
    expect(await graph.chunksMentioning(db.id, new Map([['zorblax', 1]]), { stores: ['knowledge', 'memory'] }, 10, 6)).toEqual([]);
  });
});
