import { existsSync } from 'node:fs';
import { verifySearchIndex } from '@crs/projections/search-index/search-index-rebuild';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import { indexNameFor, verifyIndexName } from '@crs/projections/search-index/search-catalog';
import { ingestMemories, waitForDatabaseDeleted, waitForStatus } from '../support/ingest';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Deletion while the search index is still writing: the purge must be the last word. A collection deleted while its
 * items were being indexed kept their chunks in the engine (the deletion waited for the read models only), and a
 * database deleted after a killed `verify` kept the verify copy of its indexes.
 */
describe('deleting while the search index still writes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('deletion-races');
  });
  afterAll(async () => {
    await t.close();
  });

  const settle = async () => {
    for (let i = 0; i < 400; i++) {
      if ((await t.runner.status()).every((s) => s.lag === 0)) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the projections did not settle');
  };

  it('a collection deleted while its chunk writes are still on their way keeps no chunk in the engine', async () => {
    await t.createDatabase('racy');
    await ingestMemories(t, 'racy', [{ id: 'keep', text: 'The lighthouse keeper logs every passing ship.' }]);
    await waitForStatus(t, 'racy', ['keep']);
    const db = (await t.directory.find('default', 'racy'))!;
    const index = (await t.search.indexName(db.id, 'memory'))!;

    // The live search index writes the doomed collection's chunks slowly: they land well after the deletion request.
    const engine = t.search.index;
    const upsert = engine.upsert.bind(engine);
    let delayed = 0;
    engine.upsert = async (name, docs) => {
      if (docs.some((d) => d.collection === 'doomed')) {
        delayed++;
        await new Promise((r) => setTimeout(r, 1500));
      }
      return upsert(name, docs);
    };
    try {
      await ingestMemories(t, 'racy', [{ id: 'd1', text: 'A memory of a collection about to go.' }, { id: 'd2', text: 'Another one of the same collection.' }], { collection: 'doomed' });
      // Chunked (the pipeline recorded its ItemChunked), so the index write is on its way; then the deletion.
      for (let i = 0; i < 400 && delayed === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(delayed).toBeGreaterThan(0);
      const del = await t.request('DELETE', '/databases/collections?database=racy&collection=doomed');
      expect(del.status).toBe(202);
      for (let i = 0; i < 400 && (await t.store.readAll()).every((e) => e.type !== 'CollectionDeleted'); i++) await new Promise((r) => setTimeout(r, 25));
      await settle();
    } finally {
      engine.upsert = upsert;
    }
    expect(await t.search.index.count(index, { collections: ['doomed'] })).toBe(0);
    expect(await t.search.index.count(index, { collections: ['default'] })).toBeGreaterThan(0);
    const verify = await verifySearchIndex(t.store, t.search, new SearchIndexSubscriber(t.ds, t.search, t.blobs, t.vectorSpaces));
    expect({ equal: verify.equal, diff: verify.firstDifference }).toEqual({ equal: true, diff: undefined });
  });

  it('a database deleted after a killed verify keeps no verify copy of its indexes', async () => {
    await t.createDatabase('shadowed');
    await ingestMemories(t, 'shadowed', [{ id: 's1', text: 'Kept only until the database goes.' }]);
    await waitForStatus(t, 'shadowed', ['s1']);
    const db = (await t.directory.find('default', 'shadowed'))!;
    const live = (await t.search.all()).filter((e) => e.databaseId === db.id);
    expect(live).toHaveLength(2);
    // What a verify killed half-way leaves: a copy of each index beside it.
    for (const e of live) await t.search.index.createIndex(verifyIndexName(e.indexName), { dimensions: e.dimensions });
    expect(await t.search.index.indexExists(verifyIndexName(indexNameFor(db.id, 'memory', 1)))).toBe(true);

    expect((await t.request('DELETE', '/databases?database=shadowed')).status).toBe(202);
    await waitForDatabaseDeleted(t, db.id);
    for (const e of live) {
      expect(await t.search.index.indexExists(e.indexName)).toBe(false);
      expect(await t.search.index.indexExists(verifyIndexName(e.indexName))).toBe(false);
    }
  });
});

/**
 * A collection's deletion removes the blobs only its items referenced (content, chunk lists, graphs) and keeps those
 * another collection shares (blobs are content-addressed per database). Before, every blob stayed on disk.
 */
describe('deleting a collection removes its blobs from disk', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('blob-sweep', { blobSweepGraceMs: 1500 });
  });
  afterAll(async () => {
    await t.close();
  });

  it('removes what only it referenced, keeps what another collection shares, and spares a blob just stored until its grace is over', async () => {
    await t.createDatabase('sweep');
    const shared = 'The same sentence ingested into two collections.';
    // Small blobs are rows in Postgres, large ones files (BLOB_ROW_MAX_BYTES): a long memory puts both kinds in play.
    const long = Array.from({ length: 80 }, (_, i) => `Line ${i} of a long memory only the doomed collection keeps.`).join('\n');
    await ingestMemories(t, 'sweep', [{ id: 'own', text: 'A memory only the doomed collection has.' }, { id: 'both', text: shared }, { id: 'renewed', text: 'Bytes about to be ingested elsewhere.' }, { id: 'long', text: long }], { collection: 'doomed' });
    await ingestMemories(t, 'sweep', [{ id: 'both', text: shared }], { collection: 'kept' });
    await waitForStatus(t, 'sweep', ['own', 'both', 'renewed', 'long'], ['completed'], 30_000, 'doomed');
    await waitForStatus(t, 'sweep', ['both'], ['completed'], 30_000, 'kept');
    const db = (await t.directory.find('default', 'sweep'))!;
    const refs = async (collection: string): Promise<string[]> => (await t.ds.query(`SELECT encode(sha256, 'hex') AS sha256 FROM rm_blob_refs WHERE database_id = $1 AND collection = $2`, [db.id, collection])).map((r: any) => r.sha256 as string);
    const stored = new Map<string, boolean>();
    const storedNow = async (shas: string[]) => {
      for (const sha of shas) stored.set(sha, await t.blobs.has(db.id, sha));
    };
    const onDisk = (sha: string) => stored.get(sha)!;
    const doomed = await refs('doomed');
    const kept = await refs('kept');
    expect(doomed.length).toBeGreaterThanOrEqual(6); // contents, chunk lists, graphs
    await storedNow([...doomed, ...kept]);
    expect(doomed.every(onDisk) && kept.every(onDisk)).toBe(true);
    const asFiles = doomed.filter((sha) => existsSync(t.blobs.path(db.id, sha)));
    expect(asFiles.length).toBeGreaterThanOrEqual(1); // the long memory's content
    expect(asFiles.length).toBeLessThan(doomed.length);

    // Queries asked of the doomed collection alone go with it; one that also asked another collection stays.
    const asked: Record<string, string> = {};
    for (const [label, body] of [
      ['doomed', { collection: 'doomed' }],
      ['kept', { collection: 'kept' }],
      ['both', { collections: ['doomed', 'kept'] }],
    ] as const) {
      const q = await t.request('POST', '/query', { body: { database: 'sweep', query: 'memory collection', ...body } });
      expect([label, q.status]).toEqual([label, 200]);
      asked[label] = q.body.meta.request_id;
    }
    await new Promise((r) => setTimeout(r, 1600)); // every blob older than the grace period
    const renewed = await t.blobs.put(db.id, 'Bytes about to be ingested elsewhere.'); // an ingest in flight stores them again
    expect(doomed).toContain(renewed);
    expect((await t.request('DELETE', '/databases/collections?database=sweep&collection=doomed')).status).toBe(202);
    for (let i = 0; i < 400 && (await refs('doomed')).length; i++) await new Promise((r) => setTimeout(r, 25));
    await storedNow([...doomed, ...kept]);

    const onlyDoomed = doomed.filter((sha) => !kept.includes(sha));
    expect(onlyDoomed.filter((sha) => sha !== renewed).filter(onDisk)).toEqual([]);
    expect(asFiles.filter((sha) => existsSync(t.blobs.path(db.id, sha)))).toEqual([]);
    expect(kept.filter((sha) => !onDisk(sha))).toEqual([]);
    expect(onDisk(renewed)).toBe(true); // spared for now
    for (let i = 0; i < 200 && onDisk(renewed); i++) {
      await new Promise((r) => setTimeout(r, 25));
      await storedNow([renewed]);
    }
    expect(onDisk(renewed)).toBe(false); // nobody referenced it once the grace period was over

    const recorded = async (label: string) => ({
      row: (await t.ds.query('SELECT 1 FROM rm_queries WHERE request_id = $1', [asked[label]])).length,
      events: (await t.store.readStream(`query-${db.id}-${asked[label]}`)).length,
    });
    expect(await recorded('doomed')).toEqual({ row: 0, events: 0 });
    expect(await recorded('kept')).toEqual({ row: 1, events: 1 });
    expect(await recorded('both')).toEqual({ row: 1, events: 1 });

    // The other collection's copy still reads and answers.
    const q = await t.request('POST', '/query', { body: { database: 'sweep', collection: 'kept', query: 'same sentence two collections' } });
    expect(q.body.data.chunks.map((c: any) => c.id)).toEqual(['both']);
    const listed = await t.request('POST', '/context/list', { body: { database: 'sweep', collection: 'kept', type: 'memory', ids: ['both'], include_fields: ['content'] } });
    expect(JSON.stringify(listed.body.data)).toContain(shared);
  });
});
