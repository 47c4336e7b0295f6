import { CachedEmbedder, PostgresEmbeddingCache, VectorSpaces, type Embedder } from '@crs/embeddings';
import { verifyProjection } from '@crs/persistence/projection-verifier';
import { rebuildSearchIndex, serialize, snapshotSearchIndex } from '@crs/projections/search-index/search-index-rebuild';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, postMultipart, waitForStatus } from '../support/ingest';

/** An embedder that must never be called: a rebuild reads vectors from the cache only. */
class ForbiddenEmbedder implements Embedder {
  constructor(readonly modelId: string, readonly dimensions: number) {}
  async embed(): Promise<Float32Array[]> {
    throw new Error('the embedding model was called during a rebuild');
  }
}

async function tables(t: TestApp): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const p of t.runner.readModels) for (const table of p.tables) out[table] = (await t.ds.query(`SELECT x::text AS r FROM ${table} x ORDER BY 1`)).map((r: any) => r.r);
  return out;
}

describe('a scripted workload rebuilds to identical read models and search indexes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('rebuild');
  });
  afterAll(async () => {
    await t.close();
  });

  it('runs the workload, deletes things, and every projection rebuilds byte for byte without the embedder', async () => {
    await t.createDatabase('alpha', { metadata_schema: [{ name: 'team', type: 'string' }] });
    await t.createDatabase('beta');
    await ingestMemories(t, 'alpha', [
      { id: 'a1', text: 'Ada wrote the first algorithm for the analytical engine.', metadata: JSON.stringify({ team: 'x' }) },
      { id: 'a2', user_assistant_pairs: [{ user: 'Favourite colour?', assistant: 'Teal, always teal.' }] },
    ]);
    await ingestMemories(t, 'alpha', [{ id: 'c1', text: 'ZEBRA-MARKER collection content that must vanish.' }], { collection: 'temp' });
    await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'alpha', app_knowledge: JSON.stringify([{ id: 'k1', content: { text: 'Knowledge about compilers and parsers.' }, acl: ['ann@corp.io'] }]) }, [
      { filename: 'notes.md', contentType: 'text/markdown', content: '# Notes\n\nLinear types make resource handling explicit.' },
    ]);
    await ingestMemories(t, 'beta', [{ id: 'b1', text: 'OKAPI-MARKER database content that must vanish.' }]);
    await waitForStatus(t, 'alpha', ['a1', 'a2', 'k1']);
    await waitForStatus(t, 'alpha', ['c1'], ['completed'], 30_000, 'temp');
    await waitForStatus(t, 'beta', ['b1']);
    await ingestMemories(t, 'alpha', [{ id: 'a1', text: 'Ada Lovelace wrote the first published algorithm.', metadata: JSON.stringify({ team: 'y' }) }]);
    await waitForStatus(t, 'alpha', ['a1']);
    await t.request('PATCH', '/context/k1/metadata', { body: { database: 'alpha', acl: ['bob@corp.io'], additional_metadata: { reviewed: true } } });
    await t.request('DELETE', '/context', { body: { database: 'alpha', ids: ['a2'] } });
    await t.request('POST', '/query', { body: { database: 'alpha', query: 'first algorithm' } });
    await t.request('DELETE', '/databases/collections?database=alpha&collection=temp');
    await t.request('DELETE', '/databases?database=beta');
    // Let every projection and processor settle.
    for (let i = 0; i < 200; i++) {
      const status = await t.runner.status();
      const gone = (await t.ds.query(`SELECT count(*)::int AS n FROM rm_databases WHERE name = 'beta'`))[0].n === 0;
      const collGone = (await t.ds.query(`SELECT count(*)::int AS n FROM rm_collections WHERE name = 'temp'`))[0].n === 0;
      if (gone && collGone && status.every((s) => s.lag === 0)) break;
      await new Promise((r) => setTimeout(r, 50));
    }

    const q = await t.request('POST', '/query', { body: { database: 'alpha', collection: 'temp', query: 'collection content that must vanish' } });
    expect(q.body.data.chunks).toEqual([]);
    await t.runner.waitFor(await t.store.headPosition(), undefined, 5000);

    // Deletion is real: no trace of the deleted content in the log, the read models or the index.
    const log = JSON.stringify((await t.store.readAll()).filter((e) => e.type !== 'QueryRecorded'));
    expect(log).not.toMatch(/OKAPI-MARKER|ZEBRA-MARKER/);
    const before = await tables(t);
    expect(JSON.stringify(before)).not.toMatch(/OKAPI-MARKER|ZEBRA-MARKER/);
    const indexBefore = await snapshotSearchIndex(t.search);
    expect(JSON.stringify(Object.values(indexBefore).flat().map((d) => d.text))).not.toMatch(/OKAPI-MARKER|ZEBRA-MARKER/);
    expect(Object.keys(indexBefore)).toHaveLength(2); // alpha's two stores only

    // Verify (shadow schema) says equal; rebuild reproduces identical tables.
    for (const p of t.runner.readModels) {
      const v = await verifyProjection(t.runner, t.ds, t.config.databaseUrl, p.name);
      expect({ name: p.name, equal: v.equal, diff: v.firstDifference }).toEqual({ name: p.name, equal: true, diff: undefined });
      await t.runner.rebuild(p.name);
    }
    expect(await tables(t)).toEqual(before);

    // Search index: a new generation from the log, vectors from the cache only.
    const cache = new PostgresEmbeddingCache(t.pool);
    const noModel = new CachedEmbedder(new ForbiddenEmbedder(t.embedder.modelId, t.embedder.dimensions), cache);
    const optimized = jest.spyOn(t.search.index, 'optimize');
    const swapped = jest.spyOn(t.search, 'replaceGeneration');
    const r = await rebuildSearchIndex(t.store, t.search, new SearchIndexSubscriber(t.ds, t.search, t.blobs, new VectorSpaces(noModel)));
    expect(r.indexes).toBe(2);
    // Each new generation is optimized (every row folded into the engine's indexes) before it is swapped in.
    const newNames = swapped.mock.calls.map((c) => c[2]);
    expect(newNames).toHaveLength(2);
    for (const [i, name] of newNames.entries()) {
      const call = optimized.mock.calls.findIndex((c) => c[0] === name);
      expect([name, call >= 0]).toEqual([name, true]);
      expect(optimized.mock.invocationCallOrder[call]).toBeLessThan(swapped.mock.invocationCallOrder[i]);
    }
    optimized.mockRestore();
    swapped.mockRestore();
    const indexAfter = await snapshotSearchIndex(t.search);
    const names = (await t.search.all()).map((e) => e.indexName);
    expect(names.every((n) => n.endsWith('_g2'))).toBe(true);
    for (const key of Object.keys(indexBefore)) expect(indexAfter[key].map(serialize)).toEqual(indexBefore[key].map(serialize));
    expect(Object.values(indexAfter).flat().map((d) => d.text).sort()).toEqual([expect.stringContaining('Ada Lovelace'), expect.stringContaining('compilers'), expect.stringContaining('Linear types')].sort());

    // The service still answers from the new generation.
    const after = await t.request('POST', '/query', { body: { database: 'alpha', query: 'Ada Lovelace published algorithm' } });
    expect(after.body.data.chunks[0].id).toBe('a1');
  });
});
