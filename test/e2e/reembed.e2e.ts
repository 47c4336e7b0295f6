import { randomUUID } from 'node:crypto';
import { crsWith } from '../support/crs';
import { DatabaseStreams } from '@crs/api/databases/database-streams';
import { createEmbedder, PostgresEmbeddingCache, VectorSpaces } from '@crs/embeddings';
import { rebuildSearchIndex } from '@crs/projections/search-index/search-index-rebuild';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import { indexNameFor } from '@crs/projections/search-index/search-catalog';
import { FakeOpenAiServer } from '../integration/embedder.fake-openai-server';
import { ingestMemories, waitForStatus } from '../support/ingest';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Changing a database's embedder is a documented re-embed (`crs databases reembed`), never a silent mix of vector
 * spaces. The service here runs the default GloVe embedder; the CLI runs with whatever embedder its environment
 * names: first a 16-dimension OpenAI-compatible model (a fake server on 127.0.0.1), then GloVe again.
 */
describe('crs databases reembed', () => {
  let t: TestApp;
  const fake = new FakeOpenAiServer(16);

  beforeAll(async () => {
    await fake.start();
    t = await startTestApp('reembed');
    await t.createDatabase('rdb');
  });
  afterAll(async () => {
    await t.close();
    await fake.stop();
  });

  const crs = (env: Record<string, string>, ...args: string[]) => crsWith(t, env, ...args);
  const fakeEnv = () => ({ EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_URL: fake.baseUrl, EMBEDDINGS_MODEL: 'fake-embed', EMBEDDINGS_DIMENSIONS: '16' });
  const stats = async () => (await t.request('GET', '/databases/stats?database=rdb')).body.data ?? (await t.request('GET', '/databases/stats?database=rdb')).body;
  const vectorsOf = async () => {
    const db = (await t.directory.find('default', 'rdb'))!;
    const name = (await t.search.indexName(db.id, 'memory'))!;
    return { name, docs: await t.search.index.listChunks(name, { limit: 100, offset: 0 }) };
  };

  it('moves the database to another embedder, requeues what errored for the mismatch, and back', async () => {
    const memories = [
      { id: 'm1', text: 'The kestrel nests on the old water tower.' },
      { id: 'm2', text: 'Grace bakes sourdough every Sunday morning.' },
      { id: 'm3', text: 'The quarterly report is due on the first Monday.' },
    ];
    await ingestMemories(t, 'rdb', memories);
    await waitForStatus(t, 'rdb', ['m1', 'm2', 'm3']);
    const glove = t.embedder.modelId;
    const before = await vectorsOf();

    const first = await crs(fakeEnv(), 'databases', 'reembed', 'rdb');
    expect(first.err).toEqual([]);
    expect(first.code).toBe(0);
    expect(first.out.join('\n')).toMatch(new RegExp(`${glove} \\(100\\) -> openai-compatible:fake-embed:16d \\(16\\); rebuilt 2 index\\(es\\) from \\d+ events, requeued 0 item`));
    expect(fake.requests.length).toBeGreaterThan(0); // the chunks were embedded with the new model

    // The database now embeds with the new model: new index generation, same chunks, 16-dimension vectors.
    const after = await vectorsOf();
    expect(after.name).not.toBe(before.name);
    expect(after.docs.map((d) => d.chunkId).sort()).toEqual(before.docs.map((d) => d.chunkId).sort());
    expect(before.docs.every((d) => d.vector.length === 100)).toBe(true);
    expect(after.docs.every((d) => d.vector.length === 16)).toBe(true);
    const s1 = await stats();
    expect(JSON.stringify(s1)).toContain('openai-compatible:fake-embed:16d');

    // Until the service runs that embedder too, the database is ranked by keywords only (vectors of two models are
    // never compared), in both modes.
    for (const mode of ['fast', 'thinking']) {
      const kw = await t.request('POST', '/query', { body: { database: 'rdb', query: 'kestrel water tower', mode, max_results: 3 } });
      expect(kw.status).toBe(200);
      const top = (kw.body.data?.chunks ?? kw.body.chunks)[0];
      expect(top.source_id ?? top.id).toBe('m1');
      expect(top.scores?.vector ?? 0).toBe(0);
    }

    // This service still runs GloVe: new content of that database errors with EMBEDDER_MISMATCH, it is never mixed in.
    await ingestMemories(t, 'rdb', [{ id: 'm4', text: 'The kestrel came back to the tower at dusk.' }]);
    await waitForStatus(t, 'rdb', ['m4'], ['errored']);
    const m4 = await t.request('GET', '/context/status?database=rdb&ids=m4');
    expect(m4.body.data.statuses[0]).toMatchObject({ indexing_status: 'errored', error_code: 'EMBEDDER_MISMATCH' });

    // Back to the service's embedder: indexes rebuilt with it, the errored item queued again and indexed.
    const second = await crs({}, 'databases', 'reembed', 'rdb');
    expect(second.code).toBe(0);
    expect(second.out.join('\n')).toMatch(/-> glove.* requeued 1 item/);
    await waitForStatus(t, 'rdb', ['m4']);
    const q = await t.request('POST', '/query', { body: { database: 'rdb', query: 'kestrel tower', max_results: 10 } });
    expect(q.status).toBe(200);
    const ids = new Set((q.body.data?.chunks ?? q.body.chunks).map((c: any) => c.source_id ?? c.id ?? c.item_id));
    expect([...ids].join(',')).toMatch(/m4/);
    expect([...ids].join(',')).toMatch(/m1/);

    // Running it again is a no-op; both changes are in the log.
    const third = await crs({}, 'databases', 'reembed', 'rdb');
    expect(third.out.join('\n')).toContain('nothing to do');
    const changes = (await t.store.readAll()).filter((e) => e.type === 'DatabaseEmbedderChanged');
    expect(changes.map((e) => [e.data.previous.modelId, e.data.embedder.modelId])).toEqual([
      [glove, 'openai-compatible:fake-embed:16d'],
      ['openai-compatible:fake-embed:16d', glove],
    ]);
    // A rebuild of the search index reproduces it exactly.
    const verify = await crs({}, 'projections', 'verify', 'search-index');
    expect(verify.out.join('\n')).toContain('equal');
  });
});

/**
 * A database recorded with the new model while its indexes still hold the old one (what a re-embed that records the
 * change before rebuilding leaves when killed half-way): its queries must still answer, the search-index processor
 * must not retry a vector of the wrong length forever (which would stop every other database's indexing), and running
 * the re-embed again must finish the move rather than find nothing to do. The service here runs the 16-dimension model; the database is left exactly in that
 * state (created with GloVe, its change recorded, its indexes never rebuilt).
 */
describe('crs databases reembed, resumed after a kill', () => {
  let t: TestApp;
  const fake = new FakeOpenAiServer(16);
  const fakeEnv = () => ({ EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_URL: fake.baseUrl, EMBEDDINGS_MODEL: 'fake-embed', EMBEDDINGS_DIMENSIONS: '16' });

  beforeAll(async () => {
    await fake.start();
    t = await startTestApp('reembed-resume', { embeddings: { provider: 'openai', url: fake.baseUrl, model: 'fake-embed', dimensions: 16 } });
  });
  afterAll(async () => {
    await t.close();
    await fake.stop();
  });

  const crs = (env: Record<string, string>, ...args: string[]) => crsWith(t, env, ...args);
  const ids = (res: { body: any }) => [...new Set<string>((res.body.data?.chunks ?? []).map((c: any) => c.id))];

  it('keeps every other database indexing, answers queries meanwhile, and finishes when run again', async () => {
    const glove = { modelId: createEmbedder({}).modelId, dimensions: 100 };
    const fakeSpace = { modelId: t.embedder.modelId, dimensions: 16 };
    const commands = t.app.get(DatabaseStreams);
    const ctx = { orgId: 'default', actor: 'test' };
    const databaseId = randomUUID();
    await commands.onRegistry(ctx, { type: 'CreateDatabase', databaseId, name: 'stuck', metadataSchema: [], embedder: glove });
    for (let i = 0; i < 400 && (await t.search.all()).filter((e) => e.databaseId === databaseId).length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    expect((await t.search.all()).filter((e) => e.databaseId === databaseId).map((e) => e.dimensions)).toEqual([100, 100]);
    // Before the change: this service's model is not the database's, its memory errors and waits for the re-embed.
    await ingestMemories(t, 'stuck', [{ id: 'early', text: 'The kestrel nests on the old water tower.' }]);
    await waitForStatus(t, 'stuck', ['early'], ['errored']);
    // The state a re-embed that records the change first leaves when killed before its swap.
    await commands.onDatabase(ctx, databaseId, { type: 'ChangeEmbedder', databaseId, embedder: fakeSpace, createdWith: glove });
    await ingestMemories(t, 'stuck', [{ id: 'late', text: 'The kestrel came back to the tower at dusk.' }]);

    // Another database keeps indexing, and the stuck one answers (by keywords: its index holds no vectors of this model).
    await t.createDatabase('bystander');
    await ingestMemories(t, 'bystander', [{ id: 'b1', text: 'Grace bakes sourdough every Sunday morning.' }]);
    await waitForStatus(t, 'bystander', ['b1']);
    const meanwhile = await t.request('POST', '/query', { body: { database: 'stuck', query: 'kestrel tower' } });
    expect(meanwhile.status).toBe(200);
    const bystander = await t.request('POST', '/query', { body: { database: 'bystander', query: 'sourdough bread' } });
    expect(ids(bystander)).toEqual(['b1']);

    // Running the re-embed again finishes the move: indexes rebuilt in the new space, the errored memory queued again.
    const resumed = await crs(fakeEnv(), 'databases', 'reembed', 'stuck');
    expect(resumed.err).toEqual([]);
    expect(resumed.out.join('\n')).toMatch(new RegExp(`${glove.modelId} \\(100\\) -> ${fakeSpace.modelId} \\(16\\); rebuilt 2 index\\(es\\) from \\d+ events, requeued 1 item`));
    await waitForStatus(t, 'stuck', ['early', 'late']);
    const after = await t.request('POST', '/query', { body: { database: 'stuck', query: 'kestrel tower', max_results: 10 } });
    expect(ids(after).sort()).toEqual(['early', 'late']);
    expect(after.body.data.chunks.some((c: any) => c.scores?.vector > 0)).toBe(true);
    const entries = (await t.search.all()).filter((e) => e.databaseId === databaseId);
    expect(entries.map((e) => [e.modelId, e.dimensions])).toEqual([[fakeSpace.modelId, 16], [fakeSpace.modelId, 16]]);

    expect((await crs(fakeEnv(), 'databases', 'reembed', 'stuck')).out.join('\n')).toContain('nothing to do');
    const verify = await crs(fakeEnv(), 'projections', 'verify', 'search-index');
    expect(verify.out.join('\n')).toContain('equal');
  });

  it('a re-embed killed after its swap (before its last replays and the record) is rebuilt again by the next run', async () => {
    const db = (await t.directory.find('default', 'bystander'))!;
    const cache = new PostgresEmbeddingCache(t.pool);
    const glove = createEmbedder({ cache });
    // The run's rebuild and swap into GloVe, then killed: the generation it replaced is still there, nothing recorded.
    const spaces = new VectorSpaces(glove, cache);
    await rebuildSearchIndex(t.store, t.search, new SearchIndexSubscriber(t.ds, t.search, t.blobs, spaces), undefined, { databaseId: db.id, space: { modelId: glove.modelId, dimensions: glove.dimensions } });
    const swapped = (await t.search.all()).filter((e) => e.databaseId === db.id);
    for (const e of swapped) await t.search.index.createIndex(indexNameFor(db.id, e.store, e.generation - 1), { dimensions: 16 });

    const resumed = await crs({}, 'databases', 'reembed', 'bystander');
    expect(resumed.out.join('\n')).toMatch(new RegExp(`-> ${glove.modelId} \\(100\\); rebuilt 2 index\\(es\\)`));
    for (const e of swapped) {
      expect(await t.search.index.indexExists(indexNameFor(db.id, e.store, e.generation - 1))).toBe(false);
      expect(await t.search.index.indexExists(e.indexName)).toBe(false); // replaced by the run that finished
    }
    expect((await t.search.all()).filter((e) => e.databaseId === db.id).map((e) => [e.modelId, e.generation])).toEqual(swapped.map((e) => [glove.modelId, e.generation + 1]));
    expect((await crs({}, 'databases', 'reembed', 'bystander')).out.join('\n')).toContain('nothing to do');
  });
});
