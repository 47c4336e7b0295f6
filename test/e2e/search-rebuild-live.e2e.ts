import { join } from 'node:path';
import { connect } from '@lancedb/lancedb';
import { crs } from '../support/crs';
import { indexNameFor } from '@crs/projections/search-index/search-catalog';
import { replayTail, verifySearchIndex } from '@crs/projections/search-index/search-index-rebuild';
import { SearchIndexSubscriber } from '@crs/projections/search-index/search-index.subscriber';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, waitForDatabaseDeleted, waitForStatus } from '../support/ingest';

/**
 * `crs projections rebuild search-index` while the service ingests: items indexed in the second after the swap must
 * reach the new generation, not be lost with the old one. It runs on an app of its own: after cli.e2e's other tests on
 * a shared app, the trickle's items can stay not_found in /context/status for 30 s, for a reason not yet understood.
 */
describe('search-index rebuild while the service ingests', () => {
  jest.setTimeout(120_000);
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('livereb');
  });
  afterAll(async () => {
    await t.close();
  });

  it('a search-index rebuild while memories keep arriving loses none of them (the CLI has its own catalog, as its own process would)', async () => {
    await t.createDatabase('trickle');
    let stop = false;
    const ids: string[] = [];
    const trickle = (async () => {
      for (let i = 0; !stop; i++) {
        const res = await ingestMemories(t, 'trickle', [{ id: `tr${i}`, text: `Trickle marker tmark${i}x about heron nesting.` }]);
        expect(res.status).toBe(200);
        ids.push(`tr${i}`);
        await new Promise((r) => setTimeout(r, 40));
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const before = ids.length;
    const rebuilt = await crs(t, 'projections', 'rebuild', 'search-index');
    expect(rebuilt.code).toBe(0);
    const during = ids.length - before;
    // Keep going a little past the rebuild, however slow the machine.
    const after = ids.length;
    while (ids.length < after + 5) await new Promise((r) => setTimeout(r, 50));
    stop = true;
    await trickle;
    for (let s = 0; s < ids.length; s += 100) await waitForStatus(t, 'trickle', ids.slice(s, s + 100));
    const missing: string[] = [];
    for (const [i, id] of ids.entries()) {
      const q = await t.request('POST', '/query', { body: { database: 'trickle', query: `tmark${i}x`, type: 'memory', query_by: 'text', max_results: 1 } });
      if (q.body.data.chunks[0]?.id !== id) missing.push(id);
    }
    expect({ ingestedDuringRebuild: during > 0, missing }).toEqual({ ingestedDuringRebuild: true, missing: [] });
    // The whole output on failure: it names the first differing chunk.
    const verified = await crs(t, 'projections', 'verify', 'search-index');
    expect({ code: verified.code, out: verified.out.join('\n') }).toEqual({ code: 0, out: expect.stringContaining('search-index: equal at') });
  });

  it('verify measures a difference again while the log moves on, and after three tries calls it unsettled, not a fault', async () => {
    await t.createDatabase('moving');
    await ingestMemories(t, 'moving', [{ id: 'mv1', text: 'A memory whose live chunk differs from the log.' }]);
    await waitForStatus(t, 'moving', ['mv1']);
    const [{ database_id: databaseId }] = await t.ds.query(`SELECT database_id FROM rm_items WHERE item_id = 'mv1'`);
    const index = (await t.search.indexName(databaseId, 'memory'))!;
    const [chunk] = (await t.search.index.listChunks(index, { limit: 1000 })).filter((d) => d.text.includes('differs from the log'));
    await t.search.index.upsert(index, [{ ...chunk, text: `${chunk.text} (edited behind the log's back)` }]);
    const subscriber = new SearchIndexSubscriber(t.ds, t.search, t.blobs, t.vectorSpaces);
    try {
      // Writes arriving: every look at the head finds 5 more positions (none of them the search index's).
      const real = t.store;
      let heads = 0;
      const moving = new Proxy(real, { get: (o, k) => (k === 'headPosition' ? async () => (await real.headPosition()) + 5 * ++heads : Reflect.get(o, k)) });
      const unsettled = await verifySearchIndex(moving, t.search, subscriber, { behindWaitMs: 300 });
      expect({ equal: unsettled.equal, unsettled: unsettled.unsettled, index: unsettled.firstDifference?.index }).toEqual({ equal: false, unsettled: { appended: 5 }, index: `${databaseId}/memory` });
      expect(heads).toBe(6); // three comparisons, each with its own look before and after
      // A quiet log: the same difference is a fault, said once.
      const quiet = await verifySearchIndex(t.store, t.search, subscriber);
      expect({ equal: quiet.equal, unsettled: quiet.unsettled }).toEqual({ equal: false, unsettled: undefined });
    } finally {
      await t.search.index.upsert(index, [chunk]);
    }
    expect((await verifySearchIndex(t.store, t.search, subscriber)).equal).toBe(true);
  });

  it('verify compares only once the live index has handled the log, and says so instead of DIFFERENT when it has not', async () => {
    await t.createDatabase('lagging');
    await ingestMemories(t, 'lagging', [{ id: 'l1', text: 'A memory the live index has not handled yet.' }]);
    await waitForStatus(t, 'lagging', ['l1']);
    // The live processor as a stopped service leaves it: its checkpoint before everything.
    const stopped = new Proxy(t.search, { get: (o, k) => (k === 'indexedTo' ? async () => 0 : Reflect.get(o, k)) });
    const subscriber = new SearchIndexSubscriber(t.ds, t.search, t.blobs, t.vectorSpaces);
    const behind = await verifySearchIndex(t.store, stopped, subscriber, { behindWaitMs: 300 });
    const first = (await t.store.readAll()).find((e) => subscriber.handles.includes(e.type as never))!;
    expect(behind).toMatchObject({ equal: false, indexes: [], behind: { indexedTo: 0, pending: first.position } });
    expect(behind.firstDifference).toBeUndefined();
    // The running service's own checkpoint: compared, equal.
    const verified = await verifySearchIndex(t.store, t.search, subscriber);
    expect({ equal: verified.equal, behind: verified.behind }).toEqual({ equal: true, behind: undefined });
  });

  it('verify names a chunk stored twice (what concurrent writers left before the table lock), and a rebuild stores it once', async () => {
    await t.createDatabase('twice');
    await ingestMemories(t, 'twice', [{ id: 'w1', text: 'A memory that was stored twice.' }]);
    await waitForStatus(t, 'twice', ['w1']);
    const [{ database_id: databaseId }] = await t.ds.query(`SELECT database_id FROM rm_items WHERE item_id = 'w1'`);
    const live = (await t.search.all()).find((e) => e.databaseId === databaseId && e.store === 'memory')!;
    const db = await connect(join(t.config.dataDir, 'lancedb'));
    const table = await db.openTable(live.indexName);
    await table.add(await table.query().toArrow());
    table.close();
    db.close();
    const verified = await crs(t, 'projections', 'verify', 'search-index');
    expect(verified.code).toBe(1);
    expect(verified.out.join('\n')).toMatch(/DIFFERENT .* chunk \S+:0\n  live: +stored more than once/);
    expect((await crs(t, 'projections', 'rebuild', 'search-index')).code).toBe(0);
    const again = await crs(t, 'projections', 'verify', 'search-index');
    expect({ code: again.code, out: again.out.join('\n') }).toEqual({ code: 0, out: expect.stringContaining('search-index: equal at') });
  });

  it('a rebuild\'s last replay removes what it wrote for an item the service deleted meanwhile (its write landed after the delete)', async () => {
    await t.createDatabase('ghost');
    await ingestMemories(t, 'ghost', [{ id: 'ghost-1', text: 'A memory deleted while a rebuild replayed it.' }]);
    await waitForStatus(t, 'ghost', ['ghost-1']);
    const [{ database_id: databaseId, item_key: itemKey }] = await t.ds.query(`SELECT database_id, item_key FROM rm_items WHERE item_id = 'ghost-1'`);
    const entry = (await t.search.all()).find((e) => e.databaseId === databaseId && e.store === 'memory')!;
    const index = entry.indexName;
    const chunksOf = async () => (await t.search.index.listChunks(index, { limit: 1000, offset: 0 })).filter((d) => d.itemId === itemKey).length;
    const chunked = (await t.store.readAll()).find((e) => e.type === 'ItemChunked' && e.data.itemKey === itemKey)!;
    // The replay's engine write waits until the service has deleted the item (read model, then index): the order in
    // which a write of the rebuild's last pass can land after the service's delete.
    const live = t.search;
    let deleted = false;
    const index_ = new Proxy(live.index, {
      get: (o, k) =>
        k === 'upsert'
          ? async (name: string, docs: { itemId: string }[]) => {
              if (!deleted && docs.some((d) => d.itemId === itemKey)) {
                deleted = true;
                expect((await t.request('DELETE', '/context', { body: { database: 'ghost', ids: ['ghost-1'], type: 'memory' } })).status).toBeLessThan(300);
                for (let i = 0; i < 400 && (await chunksOf()) > 0; i++) await new Promise((r) => setTimeout(r, 25));
                expect(await chunksOf()).toBe(0);
              }
              return o.upsert(name, docs as never);
            }
          : Reflect.get(o, k),
    });
    const catalog = new Proxy(live, { get: (o, k) => (k === 'index' ? index_ : Reflect.get(o, k)) });
    const subscriber = new SearchIndexSubscriber(t.ds, catalog, t.blobs, t.vectorSpaces);
    await replayTail(t.store, subscriber, async (db, store) => (db === databaseId && store === 'memory' ? { name: index, modelId: entry.modelId, dimensions: entry.dimensions } : null), chunked.position - 1);
    expect(deleted).toBe(true);
    expect(await chunksOf()).toBe(0);
  });

  it('two search-index rebuilds at once: one runs, the other is refused (together they dropped every index)', async () => {
    await t.createDatabase('twin');
    await ingestMemories(t, 'twin', [{ id: 'twin-1', text: 'A memory that outlives two rebuilds racing.' }]);
    await waitForStatus(t, 'twin', ['twin-1']);
    const both = await Promise.all([crs(t, 'projections', 'rebuild', 'search-index'), crs(t, 'projections', 'rebuild', 'search-index')]);
    expect(both.map((r) => r.code).sort()).toEqual([0, 1]);
    expect(both.find((r) => r.code === 1)!.err.join('\n')).toMatch(/another search-index rebuild, re-embed or verify is running/);
    const q = await t.request('POST', '/query', { body: { database: 'twin', query: 'outlives two rebuilds racing', type: 'memory', max_results: 1 } });
    expect([q.status, q.body.data.chunks[0]?.id]).toEqual([200, 'twin-1']);
    const verified = await crs(t, 'projections', 'verify', 'search-index');
    expect({ code: verified.code, out: verified.out.join('\n') }).toEqual({ code: 0, out: expect.stringContaining('search-index: equal at') });
  });

  it('no generation of the index of a database outlives it: a rebuild drops old ones an earlier killed rebuild left, a deletion drops them all', async () => {
    await t.createDatabase('gens');
    await ingestMemories(t, 'gens', [{ id: 'g1', text: 'Generation test memory.' }]);
    await waitForStatus(t, 'gens', ['g1']);
    const [{ database_id: databaseId }] = await t.ds.query(`SELECT database_id FROM rm_items WHERE item_id = 'g1'`);
    const entry = async () => (await t.search.all()).find((e) => e.store === 'memory' && e.databaseId === databaseId)!;
    expect((await crs(t, 'projections', 'rebuild', 'search-index')).code).toBe(0);
    const live = await entry();
    // What a rebuild killed after its swap leaves: the generation before the live one.
    const stray = indexNameFor(databaseId, 'memory', live.generation - 1);
    await t.search.index.createIndex(stray, { dimensions: live.dimensions });
    expect((await crs(t, 'projections', 'rebuild', 'search-index')).code).toBe(0);
    expect(await t.search.index.indexExists(stray)).toBe(false);
    // What a rebuild killed before its swap leaves: the next generation; the database's deletion drops it too.
    const next = indexNameFor(databaseId, 'memory', (await entry()).generation + 1);
    await t.search.index.createIndex(next, { dimensions: live.dimensions });
    expect((await t.request('DELETE', '/databases?database=gens')).status).toBe(202);
    await waitForDatabaseDeleted(t, databaseId);
    expect(await t.search.index.indexExists(next)).toBe(false);
  });

  it('a rebuild registers its new generation only over the one it started from (a database deleted meanwhile stays deleted)', async () => {
    await t.createDatabase('swapguard');
    await ingestMemories(t, 'swapguard', [{ id: 's1', text: 'Swap guard memory.' }]);
    await waitForStatus(t, 'swapguard', ['s1']);
    const [{ database_id: databaseId }] = await t.ds.query(`SELECT database_id FROM rm_items WHERE item_id = 's1'`);
    const live = (await t.search.all()).find((e) => e.databaseId === databaseId && e.store === 'memory')!;
    const stale = await t.search.replaceGeneration(databaseId, 'memory', indexNameFor(databaseId, 'memory', 99), 99, live, live.generation - 1);
    expect(stale).toBe(false);
    expect((await t.search.all()).find((e) => e.databaseId === databaseId && e.store === 'memory')!.generation).toBe(live.generation);
    expect((await t.request('DELETE', '/databases?database=swapguard')).status).toBe(202);
    for (let i = 0; i < 400 && (await t.search.all()).some((e) => e.databaseId === databaseId); i++) await new Promise((r) => setTimeout(r, 25));
    const afterDelete = await t.search.replaceGeneration(databaseId, 'memory', indexNameFor(databaseId, 'memory', live.generation + 1), live.generation + 1, live, live.generation);
    expect(afterDelete).toBe(false);
    expect((await t.search.all()).some((e) => e.databaseId === databaseId)).toBe(false);
  });
});
