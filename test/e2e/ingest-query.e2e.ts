import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, postMultipart, waitForStatus } from '../support/ingest';
import { streams } from '@crs/domain/streams';
import { decideOnItem } from '@crs/eventstore/item-stream';

describe('ingest and query through HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('ingestq');
    await t.createDatabase('kb', { metadata_schema: [{ name: 'team', type: 'string' }, { name: 'year', type: 'integer' }] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('ingests memories, moves them to completed, and finds them by meaning and by keyword', async () => {
    const res = await ingestMemories(t, 'kb', [
      { id: 'm1', text: 'Alice prefers green tea in the morning and never drinks coffee.', metadata: JSON.stringify({ team: 'red', year: 2024 }) },
      { id: 'm2', text: 'The deployment pipeline runs on Kubernetes with Argo CD.', metadata: JSON.stringify({ team: 'blue', year: 2023 }) },
      { id: 'm3', user_assistant_pairs: [{ user: 'Where did I park?', assistant: 'You parked on level 3, spot B12.' }] },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({ success: true, success_count: 3, failed_count: 0 });
    expect(res.body.data.results).toEqual([
      expect.objectContaining({ id: 'm1', status: 'queued', infer: false }),
      expect.objectContaining({ id: 'm2', status: 'queued' }),
      expect.objectContaining({ id: 'm3', status: 'queued' }),
    ]);
    expect(res.body.meta).toMatchObject({ database: 'kb', collection: 'default' });
    await waitForStatus(t, 'kb', ['m1', 'm2', 'm3']);

    const q = await t.request('POST', '/query', { body: { database: 'kb', query: 'what does alice like to drink', type: 'memory' } });
    expect(q.status).toBe(200);
    const chunks = q.body.data.chunks;
    expect(chunks[0]).toMatchObject({ id: 'm1', source_type: 'memory', store: 'memory', collection: 'default' });
    expect(chunks[0].chunk_uuid).toEqual(expect.any(String));
    expect(chunks[0].chunk_content).toContain('green tea');
    expect(typeof chunks[0].relevancy_score).toBe('number');
    expect(chunks[0].metadata).toEqual({ team: 'red', year: 2024 });
    expect(q.body.data.sources.map((s: any) => s.id)).toContain('m1');

    const kw = await t.request('POST', '/query', { body: { database: 'kb', query: 'Kubernetes', query_by: 'text' } });
    expect(kw.body.data.chunks[0].id).toBe('m2');
    const pairs = await t.request('POST', '/query', { body: { database: 'kb', query: 'parking spot level', type: 'memory' } });
    expect(pairs.body.data.chunks[0].id).toBe('m3');
    expect(pairs.body.data.chunks[0].chunk_content).toMatch(/User: Where did I park\?[\s\S]*Assistant: You parked/);
  });

  it('conversation context: the memory after a matching one in the same conversation is found too, not across conversations', async () => {
    await t.createDatabase('conv');
    await ingestMemories(t, 'conv', [
      { id: 'c1', text: 'Melanie said, "What did you research last week?"', additional_metadata: { session: 1 } },
      { id: 'c2', text: 'Caroline said, "Adoption agencies! I want to give a kid a loving home."', additional_metadata: { session: 1 } },
      { id: 'd1', text: 'Caroline said, "See you soon."', additional_metadata: { session: 2 } },
      // without additional metadata: not a conversation turn, neither lends nor borrows
      { id: 'f1', text: 'Jon did some research on bakeries.' },
      { id: 'f2', text: 'Gina bought a new pair of shoes.' },
    ]);
    await waitForStatus(t, 'conv', ['c1', 'c2', 'd1', 'f1', 'f2']);
    const q = await t.request('POST', '/query', { body: { database: 'conv', query: 'research', type: 'memory', query_by: 'text' } });
    expect(q.body.data.chunks.map((c: any) => c.id).sort()).toEqual(['c1', 'c2', 'f1']);
    const c1 = q.body.data.chunks.find((c: any) => c.id === 'c1');
    const c2 = q.body.data.chunks.find((c: any) => c.id === 'c2');
    expect(c2.chunk_content).toContain('Adoption agencies');
    expect(c2.scores.keyword).toBeLessThan(c1.scores.keyword);
    // `and` and `phrase` promise matches: no context there
    const and = await t.request('POST', '/query', { body: { database: 'conv', query: 'research', type: 'memory', query_by: 'text', operator: 'and' } });
    expect(and.body.data.chunks.map((c: any) => c.id).sort()).toEqual(['c1', 'f1']);
  });

  it('conversation context: a neighbour is served only when it passes the checks every hit passes (filters, expiry, deletion)', async () => {
    await t.createDatabase('conv-checks', { metadata_schema: [{ name: 'team', type: 'string' }] });
    const session = { session: 7 };
    const accepted = Date.now();
    await ingestMemories(t, 'conv-checks', [
      { id: 'n1', text: 'Ravi said, "The observatory night was great."', metadata: JSON.stringify({ team: 'red' }), additional_metadata: session },
      { id: 'n2', text: 'Mia said, "I loved the telescope too."', metadata: JSON.stringify({ team: 'blue' }), additional_metadata: session },
      // 6 s: room for indexing on a loaded machine before the first query.
      { id: 'n3', text: 'Ravi said, "Next time bring the warm blanket."', metadata: JSON.stringify({ team: 'red' }), additional_metadata: session, expiry_time: 6 },
    ]);
    await waitForStatus(t, 'conv-checks', ['n1', 'n2', 'n3']);
    const found = async (extra: Record<string, unknown> = {}) =>
      (await t.request('POST', '/query', { body: { database: 'conv-checks', query: 'observatory', type: 'memory', query_by: 'text', ...extra } })).body.data.chunks.map((c: any) => c.id).sort();
    expect(await found()).toEqual(['n1', 'n2', 'n3']);
    expect(await found({ metadata_filters: { team: 'red' } })).toEqual(['n1', 'n3']);
    await new Promise((r) => setTimeout(r, Math.max(0, accepted + 6100 - Date.now())));
    expect(await found()).toEqual(['n1', 'n2']);
    expect((await t.request('DELETE', '/context', { body: { database: 'conv-checks', ids: ['n2'], type: 'memory' } })).status).toBe(200);
    expect(await found()).toEqual(['n1']);
  });

  it('filters by schema metadata and additional_metadata; unknown filter keys are 400', async () => {
    await ingestMemories(t, 'kb', [{ id: 'f1', text: 'Quarterly revenue report for the sales team', metadata: JSON.stringify({ team: 'blue', year: 2022 }), additional_metadata: { connector_id: 'c-1' } }]);
    await waitForStatus(t, 'kb', ['f1']);
    const blue = await t.request('POST', '/query', { body: { database: 'kb', query: 'quarterly revenue report', metadata_filters: { team: 'blue' } } });
    expect(blue.body.data.chunks.map((c: any) => c.id)).toContain('f1');
    expect(blue.body.data.chunks.every((c: any) => c.metadata.team === 'blue')).toBe(true);
    const red = await t.request('POST', '/query', { body: { database: 'kb', query: 'quarterly revenue report', metadata_filters: { team: 'red' } } });
    expect(red.body.data.chunks.map((c: any) => c.id)).not.toContain('f1');
    const conn = await t.request('POST', '/query', { body: { database: 'kb', query: 'quarterly revenue', metadata_filters: { additional_metadata: { connector_id: 'c-1' } } } });
    expect(conn.body.data.chunks.map((c: any) => c.id)).toEqual(['f1']);
    const bad = await t.request('POST', '/query', { body: { database: 'kb', query: 'x', metadata_filters: { colour: 'red' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/colour/);
  });

  it('a filter on a key the index holds no token for is 400 (not a 500, nor for dotted keys an empty answer); a key given twice must meet both conditions', async () => {
    const odd = { 'channel name': 'general', "a'b": 'quoted', 'é': 'accent', '1a': 'digit', 'a.b': 'dotted', 'a-b': 'dashed', ['k'.repeat(65)]: 'long' };
    await ingestMemories(t, 'kb', [{ id: 'odd-keys', text: 'Minutes of the pelican committee', metadata: JSON.stringify({ team: 'blue' }), additional_metadata: { ...odd, k_64: 'fine' } }]);
    await waitForStatus(t, 'kb', ['odd-keys']);
    for (const [key, value] of Object.entries(odd)) {
      const refused = await t.request('POST', '/query', { body: { database: 'kb', query: 'pelican committee', metadata_filters: { additional_metadata: { [key]: value } } } });
      expect([key, refused.status, refused.body.error?.code]).toEqual([key, 400, 'INVALID_INPUT']);
      expect(refused.body.error.message).toContain('cannot be filtered on');
    }
    const fine = await t.request('POST', '/query', { body: { database: 'kb', query: 'pelican committee', metadata_filters: { additional_metadata: { k_64: 'fine' } } } });
    expect(fine.body.data.chunks.map((c: any) => c.id)).toEqual(['odd-keys']);
    // The item keeps every key it was sent with.
    expect(fine.body.data.chunks[0].additional_metadata ?? fine.body.data.chunks[0].document_metadata).toMatchObject(odd);
    // Top level and tenant_metadata on one attribute: both hold (the second does not replace the first), in either order.
    for (const filters of [{ team: 'blue', tenant_metadata: { team: 'red' } }, { tenant_metadata: { team: 'red' }, team: 'blue' }]) {
      const both = await t.request('POST', '/query', { body: { database: 'kb', query: 'pelican committee', metadata_filters: filters } });
      expect(both.body.data.chunks).toEqual([]);
    }
    const agree = await t.request('POST', '/query', { body: { database: 'kb', query: 'pelican committee', metadata_filters: { team: ['blue', 'red'], tenant_metadata: { team: 'blue' } } } });
    expect(agree.body.data.chunks.map((c: any) => c.id)).toContain('odd-keys');
    expect(agree.body.data.chunks.every((c: any) => c.metadata.team === 'blue')).toBe(true);
  });

  it('knowledge: files of several types and app items become searchable', async () => {
    const res = await postMultipart(
      t,
      '/context/ingest',
      {
        type: 'knowledge',
        database: 'kb',
        document_metadata: JSON.stringify([{ id: 'doc-md', metadata: { team: 'red' } }, { id: 'doc-html' }]),
        app_knowledge: JSON.stringify({ id: 'slack-1', app_kind: 'message', app_provider: 'slack', content: { text: 'The offsite is planned in Lisbon next spring.' } }),
      },
      [
        { filename: 'guide.md', contentType: 'text/markdown', content: '# Install\n\nRun the installer.\n\n## Linux\n\nUse apt to install the zebrafish package.' },
        { filename: 'page.html', contentType: 'text/html', content: '<html><head><title>Menu</title></head><body><h1>Lunch</h1><p>Pasta with basil pesto on Fridays.</p></body></html>' },
      ],
    );
    expect(res.status).toBe(200);
    expect(res.body.data.results.map((r: any) => r.id)).toEqual(['doc-md', 'doc-html', 'slack-1']);
    expect(res.body.data.results[0].filename).toBe('guide.md');
    await waitForStatus(t, 'kb', ['doc-md', 'doc-html', 'slack-1']);
    const q1 = await t.request('POST', '/query', { body: { database: 'kb', query: 'zebrafish package', type: 'knowledge' } });
    expect(q1.body.data.chunks[0]).toMatchObject({ id: 'doc-md', source_type: 'file', source_title: 'guide.md' });
    expect(q1.body.data.chunks[0].chunk_content).toContain('Linux');
    const q2 = await t.request('POST', '/query', { body: { database: 'kb', query: 'basil pesto', type: 'knowledge' } });
    expect(q2.body.data.chunks[0].id).toBe('doc-html');
    const q3 = await t.request('POST', '/query', { body: { database: 'kb', query: 'offsite Lisbon', type: 'knowledge' } });
    expect(q3.body.data.chunks[0]).toMatchObject({ id: 'slack-1', source_type: 'app:slack' });
    expect(q3.body.data.sources[0]).toMatchObject({ id: 'slack-1', app_kind: 'message', app_provider: 'slack' });
    const noApps = await t.request('POST', '/query', { body: { database: 'kb', query: 'offsite Lisbon', type: 'knowledge', query_apps: false } });
    expect(noApps.body.data.chunks.map((c: any) => c.id)).not.toContain('slack-1');
  });

  it('records every query as an event with its results', async () => {
    const q = await t.request('POST', '/query', { body: { database: 'kb', query: 'green tea' } });
    const rid = q.body.meta.request_id;
    const events = (await t.store.readAll()).filter((e) => e.type === 'QueryRecorded').filter((e) => e.data.requestId === rid);
    expect(events).toHaveLength(1);
    expect(events[0].data.results.map((r: any) => r.itemId)).toEqual(q.body.data.chunks.map((c: any) => c.id));
    expect(events[0].data.query).toBe('green tea');
  });

  it('/metrics counts where query time goes, per step', async () => {
    const calls = async () => {
      const text = (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.key}` } })).body;
      return Object.fromEntries([...text.matchAll(/^crs_query_step_calls_total\{step="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
    };
    const before = await calls();
    await t.request('POST', '/query', { body: { database: 'kb', query: 'green tea', type: 'all' } });
    const after = await calls();
    const delta = (step: string) => (after[step] ?? 0) - (before[step] ?? 0);
    expect(delta('total.fast')).toBe(1);
    for (const step of ['retrieve', 'embed', 'engine.keyword.memory', 'engine.vector.memory', 'engine.keyword.knowledge', 'engine.vector.knowledge', 'conversation_context', 'record', 'graph.context']) {
      expect([step, delta(step)]).toEqual([step, 1]);
    }
    // One wait per candidate list (keyword and vector), each started as soon as its list arrives.
    for (const step of ['read_model.memory', 'read_model.knowledge']) expect([step, delta(step)]).toEqual([step, 2]);
    const seconds = (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.key}` } })).body.match(/^crs_query_step_seconds_total\{step="total.fast"\} ([0-9.e+-]+)$/m);
    expect(Number(seconds?.[1])).toBeGreaterThan(0);
  });

  it('/metrics reports each bounded cache: the search engine, the small tables held in the process and the blobs hold what an ingest and a query read', async () => {
    await ingestMemories(t, 'kb', [{ id: 'cached-heron', text: 'A heron stood in the reeds at the edge of the pond.' }]);
    await waitForStatus(t, 'kb', ['cached-heron']);
    expect((await t.request('POST', '/query', { body: { database: 'kb', query: 'heron reeds', type: 'memory' } })).status).toBe(200);
    const text = (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.key}` } })).body;
    const gauge = (name: string, cache: string) => Number(new RegExp(`^${name}\\{cache="${cache}"\\} ([0-9.e+-]+)$`, 'm').exec(text)?.[1]);
    for (const cache of ['search_engine', 'search_resident', 'blobs']) {
      expect([cache, gauge('crs_cache_bytes', cache) > 0]).toEqual([cache, true]);
      expect([cache, gauge('crs_cache_entries', cache) > 0]).toEqual([cache, true]);
    }
    expect(gauge('crs_cache_bytes', 'search_engine')).toBeLessThanOrEqual(t.config.caches.searchIndexBytes + t.config.caches.searchMetadataBytes);
    expect(gauge('crs_cache_bytes', 'search_resident')).toBeLessThanOrEqual(t.config.caches.searchResidentBytes);
    expect(gauge('crs_cache_bytes', 'blobs')).toBeLessThanOrEqual(t.config.caches.blobBytes);
  });
});

describe('query knobs really change retrieval', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('knobs');
    await t.createDatabase('k');
    await ingestMemories(t, 'k', [{ id: 'old', text: 'Team offsite plans for the spring.' }]);
    await waitForStatus(t, 'k', ['old']);
    // Age the first memory by a year (as if ingested then): its read-model row and index chunk keep their content.
    await t.ds.query(`UPDATE rm_items SET updated_at = now() - interval '365 days' WHERE item_id = 'old'`);
    await ingestMemories(t, 'k', [
      { id: 'new', text: 'Team offsite plans for the spring!' },
      { id: 'jazz', text: 'A playlist of saxophone recordings from the fifties.' },
      { id: 'music2', text: 'Concert tickets for the orchestra next week.' },
      { id: 'podcast', text: 'A podcast episode about gardening and compost.' },
      { id: 'radio', text: 'The radio station plays the news every hour.' },
    ]);
    await waitForStatus(t, 'k', ['new', 'jazz', 'music2', 'podcast', 'radio']);
  });
  afterAll(async () => {
    await t.close();
  });

  it('recency_bias prefers the newer of two equally relevant items', async () => {
    const body = { database: 'k', query: 'team offsite plans spring', type: 'memory', query_by: 'text' };
    const biased = await t.request('POST', '/query', { body: { ...body, recency_bias: 0.9 } });
    const ids = biased.body.data.chunks.map((c: any) => c.id);
    expect(ids.indexOf('new')).toBeLessThan(ids.indexOf('old'));
    const scores = Object.fromEntries(biased.body.data.chunks.map((c: any) => [c.id, c.relevancy_score]));
    expect(scores.new).toBeGreaterThan(scores.old);
  });

  const ranking = async (body: Record<string, unknown>) =>
    (await t.request('POST', '/query', { body: { database: 'k', type: 'memory', ...body } })).body.data.chunks.map((c: any) => c.id) as string[];

  it('additional_context steers the vector search: the ranking moves from the baseline toward the context', async () => {
    const query = { query: 'something to listen to', alpha: 1 };
    const baseline = await ranking(query);
    const steered = await ranking({ ...query, additional_context: 'concert tickets for the orchestra' });
    // Without it the playlist leads and the concert is not first; with it the concert leads.
    expect(baseline[0]).toBe('jazz');
    expect(baseline.indexOf('music2')).toBeGreaterThan(0);
    expect(steered[0]).toBe('music2');
    expect(steered).not.toEqual(baseline);
    expect([...steered].sort()).toEqual([...baseline].sort()); // the same candidates, ranked otherwise
  });

  it('alpha moves the balance: keyword-only, balanced and vector-only rankings differ as their weights say', async () => {
    // Each of two memories holds one of the words (the shorter one scores higher on keywords); by meaning, the
    // concert is closest to the query and the gardening podcast next.
    const query = 'compost for the orchestra';
    const keyword = await ranking({ query, alpha: 0 });
    const balanced = await ranking({ query, alpha: 0.5 });
    const vector = await ranking({ query, alpha: 1 });
    // Keywords alone: only the two memories holding a word of the query, the podcast first.
    expect(keyword).toEqual(['podcast', 'music2']);
    // Vectors alone: every memory, the concert first.
    expect(vector.slice(0, 3)).toEqual(['music2', 'podcast', 'jazz']);
    expect(vector).toHaveLength(6);
    // Halfway: the podcast's keyword lead and its closeness by meaning outweigh the concert's; the vector side adds the rest.
    expect(balanced.slice(0, 3)).toEqual(['podcast', 'music2', 'jazz']);
    expect(balanced).toHaveLength(6);
    // The scores say the same: keyword-only carries no vector score, vector-only no keyword score.
    const kw = await t.request('POST', '/query', { body: { database: 'k', query, type: 'memory', alpha: 0 } });
    expect(kw.body.data.chunks.every((c: any) => c.scores.vector === 0)).toBe(true);
    const vec = await t.request('POST', '/query', { body: { database: 'k', query, type: 'memory', alpha: 1 } });
    expect(vec.body.data.chunks.every((c: any) => c.scores.keyword === 0)).toBe(true);
  });
});

/**
 * The spec's states: nothing is searchable while `queued` or `processing`, everything is from `graph_creation` on. The
 * pipeline is held at each state (claims stopped; the index stage held after its chunks are in the search index; the
 * graph stage held before `completed`), and every retrieval path is asked at each.
 */
describe('searchable from graph_creation on, never while queued or processing', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('searchable');
    await t.createDatabase('s');
  });
  afterAll(async () => {
    await t.close();
  });

  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    return { opened, open };
  };
  const statusOf = async (id: string) => (await t.request('GET', `/context/status?database=s&id=${id}`)).body.data.indexing_status;
  /** What every retrieval path returns for the item's words: fast hybrid, keyword only, vector only, thinking, legacy recall. */
  const found = async (id: string) => {
    const query = 'quokka xylophone recital';
    const bodies = [{ query }, { query, query_by: 'text' }, { query, alpha: 1 }, { query, mode: 'thinking' }];
    const results = await Promise.all(bodies.map((b) => t.request('POST', '/query', { body: { database: 's', type: 'memory', ...b } })));
    const recall = await t.request('POST', '/recall/full_recall', { body: { database: 's', query } });
    return [...results.map((r) => r.body.data.chunks), recall.body.chunks].map((chunks: any[]) => chunks.some((c) => c.id === id));
  };

  it('queued and processing (its chunks already in the search index): not returned; graph_creation and completed: returned', async () => {
    // queued: nothing claims it.
    await t.pipeline.stop();
    await ingestMemories(t, 's', [{ id: 'rq', text: 'A quokka gave a xylophone recital at the zoo.' }]);
    expect(await statusOf('rq')).toBe('queued');
    expect(await found('rq')).toEqual([false, false, false, false, false]);

    // processing: held once its chunks are in the search index (what a query's engine call finds).
    const waitFor = t.runner.waitFor.bind(t.runner);
    const indexed = gate();
    const indexRelease = gate();
    const graphing = gate();
    const graphRelease = gate();
    t.runner.waitFor = async (position, names, timeoutMs) => {
      const reached = await waitFor(position, names, timeoutMs);
      if (names?.join() === 'search-index,items') {
        indexed.open();
        await indexRelease.opened;
      }
      if (names?.join() === 'graph') {
        graphing.open();
        await graphRelease.opened;
      }
      return reached;
    };
    try {
      t.pipeline.start();
      await indexed.opened;
      expect(await statusOf('rq')).toBe('processing');
      const db = (await t.directory.find('default', 's'))!;
      const [{ item_key: key }] = await t.ds.query(`SELECT item_key FROM rm_items WHERE database_id = $1 AND item_id = 'rq'`, [db.id]);
      expect(await t.search.index.count((await t.search.indexName(db.id, 'memory'))!, { itemIds: [key] })).toBeGreaterThan(0);
      expect(await found('rq')).toEqual([false, false, false, false, false]);

      // graph_creation: the index stage goes on, the graph stage is held before completed.
      indexRelease.open();
      await graphing.opened;
      // The graph stage may claim the item before the items read model has applied its GraphExtracted.
      expect(await waitFor(await t.store.headPosition(), ['items'], 5000)).toBe(true);
      expect(await statusOf('rq')).toBe('graph_creation');
      expect(await found('rq')).toEqual([true, true, true, true, true]);
    } finally {
      t.runner.waitFor = waitFor;
      indexRelease.open();
      graphRelease.open();
    }
    await waitForStatus(t, 's', ['rq']);
    expect(await found('rq')).toEqual([true, true, true, true, true]);
  });

  /** An item's stream as event types, a StatusAdvanced with its status. */
  const historyOf = async (id: string) => {
    const db = (await t.directory.find('default', 's'))!;
    const [{ item_key: key }] = await t.ds.query(`SELECT item_key FROM rm_items WHERE database_id = $1 AND item_id = $2`, [db.id, id]);
    const history = (await t.store.readStreams([streams.item(db.id, key)])).get(streams.item(db.id, key))!;
    return { db, key, events: history.map((e) => (e.type === 'StatusAdvanced' ? `${e.type}:${e.data.status}` : e.type)) };
  };

  it('an item a log left at graph_creation by a StatusAdvanced, without a graph, gets its graph and completes', async () => {
    await t.pipeline.stop();
    try {
      await ingestMemories(t, 's', [{ id: 'old', text: 'A walrus painted the harbour crane in Reykjavik.' }]);
      const db = (await t.directory.find('default', 's'))!;
      const [row] = await t.ds.query(`SELECT item_key, item_id, collection, store, content_version FROM rm_items WHERE database_id = $1 AND item_id = 'old'`, [db.id]);
      const ids = { databaseId: db.id, itemKey: row.item_key, itemId: row.item_id, collection: row.collection, store: row.store };
      const ctx = { orgId: 'default', actor: 'system:pipeline' };
      const text = 'A walrus painted the harbour crane in Reykjavik.';
      const chunksSha256 = await t.blobs.put(db.id, JSON.stringify([{ index: 0, text, startChar: 0, endChar: text.length }]));
      // Every status move a StatusAdvanced of its own, as such a log has them.
      await decideOnItem(t.store, ctx, db.id, row.item_key, () => [{ type: 'StatusAdvanced', data: { ...ids, contentVersion: row.content_version, status: 'processing' } }]);
      const chunkedAt = await decideOnItem(t.store, ctx, db.id, row.item_key, () => [
        { type: 'ItemChunked', data: { databaseId: db.id, itemKey: row.item_key, contentVersion: row.content_version, chunksSha256, chunkCount: 1, embedder: t.embedder.modelId, format: 'text', parsedBytes: text.length } },
      ]);
      expect(await t.runner.waitFor(chunkedAt!, ['search-index', 'items'], 10_000)).toBe(true);
      const searchableAt = await decideOnItem(t.store, ctx, db.id, row.item_key, () => [{ type: 'StatusAdvanced', data: { ...ids, contentVersion: row.content_version, status: 'graph_creation' } }]);
      expect(await t.runner.waitFor(searchableAt!, ['items'], 5000)).toBe(true);
      expect(await statusOf('old')).toBe('graph_creation');
    } finally {
      t.pipeline.start();
    }
    await waitForStatus(t, 's', ['old']);
    const { db, key, events } = await historyOf('old');
    expect(events).toEqual([
      'ItemIngested',
      'StatusAdvanced:processing',
      'ItemChunked',
      'StatusAdvanced:graph_creation',
      'GraphExtracted',
      'StatusAdvanced:completed',
    ]);
    const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM rm_graph_mentions WHERE database_id = $1 AND item_key = $2`, [db.id, key]);
    expect(n).toBeGreaterThan(0);
  });

  it('a memory indexed in under a second writes four events: its chunk list stands for processing, its graph for graph_creation', async () => {
    await ingestMemories(t, 's', [{ id: 'five', text: 'A pelican repaired the lighthouse clock on Tuesday.' }]);
    await waitForStatus(t, 's', ['five']);
    expect((await historyOf('five')).events).toEqual([
      'ItemIngested',
      'ItemChunked',
      'GraphExtracted',
      'StatusAdvanced:completed',
    ]);
  });
});
