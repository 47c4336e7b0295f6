import { configFromEnv } from '@crs/config';
import { ingestMemories, postMultipart, waitForDatabaseDeleted, waitForStatus } from '../support/ingest';
import { startTestApp, type TestApp } from '../support/test-app';

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/**
 * Once a deletion is accepted, nothing of the collection (or database) is served, whatever the purge's progress. The
 * purge is held here at its first step (the deletion processor has seen the request and waits on it), so every read
 * below runs inside the window in which the content is still in the read models and the search index.
 */
describe('a collection or database being deleted is served by no endpoint', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Webhook records for the items (delivered or not: a closed port on the loopback receives nothing).
    const webhooks = { ...configFromEnv({}, 'postgres://unused').webhooks, allowLoopback: true, retryScheduleMs: [60_000], pollMs: 25, timeoutMs: 1000 };
    t = await startTestApp('deletion-window', { webhooks });
    const reg = await t.request('POST', '/webhooks/indexing', { body: { url: 'http://127.0.0.1:9/hooks', event_types: ['indexing.status_changed'] } });
    expect(reg.status).toBe(200);
  });
  afterAll(async () => {
    await t.close();
  });

  const ids = (res: any) => res.body.data.chunks.map((c: any) => c.id);
  /** A presigned URL fetched as its holder does: no API key. */
  const anonymous = (url: string) => t.app.inject({ method: 'GET', url: new URL(url).pathname });
  const deliveriesOf = async (database: string) => ((await t.request('GET', '/webhooks/indexing/deliveries?limit=100')).body.deliveries as any[]).filter((d) => d.database === database);

  it('a collection: query, recall, list, inspect, status, graph, stats, deliveries, edits and deletions see nothing of it while its purge runs', async () => {
    await t.createDatabase('win');
    await ingestMemories(t, 'win', [{ id: 'kept', text: 'The quokka keeper feeds the animals at dawn.' }]);
    await ingestMemories(t, 'win', [{ id: 'doomed-1', text: 'Quokka Island hosts the quokka colony studied by Dr. Marsh.' }], { collection: 'doomed' });
    await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'win', collection: 'doomed', app_knowledge: JSON.stringify([{ id: 'doomed-k', app_kind: 'message', app_provider: 'slack', content: { text: 'Quokka census results from Rottnest.' } }]) });
    await waitForStatus(t, 'win', ['kept']);
    await waitForStatus(t, 'win', ['doomed-1', 'doomed-k'], ['completed'], 30_000, 'doomed');
    const db = (await t.directory.find('default', 'win'))!;
    for (let i = 0; i < 400 && (await deliveriesOf('win')).filter((d) => d.collection === 'doomed').length < 2; i++) await new Promise((r) => setTimeout(r, 25));

    // Before: everything of the collection is served (the checks below would pass on an empty collection otherwise).
    const both = { database: 'win', collections: ['default', 'doomed'], query: 'quokka' };
    expect(ids(await t.request('POST', '/query', { body: both })).sort()).toEqual(['doomed-1', 'doomed-k', 'kept']);
    expect((await t.request('GET', '/context/inspect?database=win&collection=doomed&id=doomed-1')).status).toBe(200);
    const presigned = (await t.request('GET', '/context/inspect?database=win&collection=doomed&id=doomed-1&mode=url')).body.data.presigned_url;
    expect((await anonymous(presigned)).statusCode).toBe(200);
    expect((await t.request('GET', '/context/graph/entities?database=win&collection=doomed&id=doomed-1')).status).toBe(200);
    expect((await t.request('GET', '/context/relations?database=win&collection=doomed')).body.data.relations.length).toBeGreaterThan(0);
    expect((await deliveriesOf('win')).filter((d) => d.collection === 'doomed')).toHaveLength(2);

    const purgeCollection = t.resources.purgeCollection.bind(t.resources);
    const purging = gate();
    const release = gate();
    t.resources.purgeCollection = async (databaseId, collection) => {
      purging.open();
      await release.opened;
      return purgeCollection(databaseId, collection);
    };
    try {
      expect((await t.request('DELETE', '/databases/collections?database=win&collection=doomed')).status).toBe(202);
      await purging.opened;
      // The purge has not started: the content is still in the search index and the read models.
      expect(await t.search.index.count((await t.search.indexName(db.id, 'memory'))!, { collections: ['doomed'] })).toBeGreaterThan(0);
      expect((await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE collection = 'doomed'`))[0].n).toBe(2);

      expect(ids(await t.request('POST', '/query', { body: both }))).toEqual(['kept']);
      expect(ids(await t.request('POST', '/query', { body: { ...both, mode: 'thinking' } }))).toEqual(['kept']);
      expect(ids(await t.request('POST', '/query', { body: { database: 'win', collection: 'doomed', query: 'quokka colony census' } }))).toEqual([]);
      expect((await t.request('POST', '/recall/full_recall', { body: { tenant_id: 'win', sub_tenant_id: 'doomed', query: 'quokka' } })).body.chunks).toEqual([]);
      const list = await t.request('POST', '/context/list', { body: { database: 'win', collection: 'doomed', type: 'memory' } });
      expect([list.body.data.user_memories, list.body.data.total]).toEqual([[], 0]);
      const listK = await t.request('POST', '/context/list', { body: { database: 'win', collection: 'doomed', type: 'knowledge' } });
      expect([listK.body.data.sources, listK.body.data.total]).toEqual([[], 0]);
      for (const url of ['/context/inspect?database=win&collection=doomed&id=doomed-1', '/context/status?database=win&collection=doomed&id=doomed-1', '/context/status?database=win&id=doomed-1', '/context/graph/entities?database=win&collection=doomed&id=doomed-1']) {
        const res = await t.request('GET', url);
        expect([url, res.status, res.body.error?.code]).toEqual([url, 404, 'ITEM_NOT_FOUND']);
      }
      const viaUrl = await anonymous(presigned);
      expect([viaUrl.statusCode, viaUrl.json().error.code]).toEqual([404, 'ITEM_NOT_FOUND']);
      const verify = await t.request('POST', '/ingestion/verify_processing', { body: { tenant_id: 'win', ids: ['doomed-1', 'doomed-k'] } });
      expect(verify.body.statuses.map((s: any) => s.indexing_status)).toEqual(['not_found', 'not_found']);
      expect((await t.request('GET', '/context/relations?database=win&collection=doomed')).body.data.relations).toEqual([]);
      expect((await t.request('GET', '/context/graph/neighbours?database=win&collection=doomed&entity=quokka')).body.data.count).toBe(0);
      const stats = await t.request('GET', '/databases/stats?database=win');
      expect(stats.body.data.items.total).toBe(1);
      expect((await t.request('GET', '/databases/stats?database=win&collection=doomed')).body.data.items.total).toBe(0);
      expect(await deliveriesOf('win')).toEqual([expect.objectContaining({ doc_id: 'kept', collection: 'default' })]);
      // Nor can it be changed: an edit or a deletion of its items finds nothing.
      expect((await t.request('PATCH', '/context/doomed-1/metadata', { body: { database: 'win', collection: 'doomed', title: 'x' } })).status).toBe(404);
      const del = await t.request('DELETE', '/context', { body: { database: 'win', collection: 'doomed', ids: ['doomed-1'] } });
      expect(del.body.data.results).toEqual([expect.objectContaining({ id: 'doomed-1', deleted: false })]);
    } finally {
      t.resources.purgeCollection = purgeCollection;
      release.open();
    }
    for (let i = 0; i < 400 && !(await t.store.readAll()).some((e) => e.type === 'CollectionDeleted'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(ids(await t.request('POST', '/query', { body: both }))).toEqual(['kept']);
    expect((await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE collection = 'doomed'`))[0].n).toBe(0);
  });

  it('a database: every read answers 404 and its deliveries leave the list while its purge runs', async () => {
    await t.createDatabase('gone');
    await ingestMemories(t, 'gone', [{ id: 'g1', text: 'The wombat burrow is under the old gum tree.' }]);
    await waitForStatus(t, 'gone', ['g1']);
    const db = (await t.directory.find('default', 'gone'))!;
    for (let i = 0; i < 400 && (await deliveriesOf('gone')).length < 1; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await deliveriesOf('gone')).toHaveLength(1);
    const presigned = (await t.request('GET', '/context/inspect?database=gone&id=g1&mode=url')).body.data.presigned_url;
    expect((await anonymous(presigned)).statusCode).toBe(200);

    const purgeDatabase = t.resources.purgeDatabase.bind(t.resources);
    const purging = gate();
    const release = gate();
    t.resources.purgeDatabase = async (databaseId) => {
      purging.open();
      await release.opened;
      return purgeDatabase(databaseId);
    };
    try {
      expect((await t.request('DELETE', '/databases?database=gone')).status).toBe(202);
      await purging.opened;
      expect((await t.ds.query('SELECT count(*)::int AS n FROM rm_items WHERE database_id = $1', [db.id]))[0].n).toBe(1);
      for (const [method, url, body] of [
        ['POST', '/query', { database: 'gone', query: 'wombat burrow' }],
        ['POST', '/context/list', { database: 'gone', type: 'memory' }],
        ['GET', '/context/inspect?database=gone&id=g1'],
        ['GET', '/context/status?database=gone&id=g1'],
        ['GET', '/context/relations?database=gone'],
        ['GET', '/databases/stats?database=gone'],
        ['GET', '/databases/status?database=gone'],
        ['GET', '/databases/collections?database=gone'],
      ] as const) {
        const res = await t.request(method, url, body ? { body } : {});
        expect([url, res.status, res.body.error?.code]).toEqual([url, 404, 'DATABASE_NOT_FOUND']);
      }
      expect((await t.request('GET', '/databases')).body.data.databases.map((d: any) => d.database)).not.toContain('gone');
      expect(await deliveriesOf('gone')).toEqual([]);
      const viaUrl = await anonymous(presigned);
      expect([viaUrl.statusCode, viaUrl.json().error.code]).toEqual([404, 'ITEM_NOT_FOUND']);
    } finally {
      t.resources.purgeDatabase = purgeDatabase;
      release.open();
    }
    await waitForDatabaseDeleted(t, db.id);
  });
});
