import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { itemKey } from '@crs/domain/items/item-input';
import { openDataSource } from '@crs/persistence/data-source';
import { createTestDatabase } from '@crs/test/support/test-database';
import { expectIdempotent, recorded } from '@crs/test/support/projection-spec';
import { blobRefsProjection } from './blob-refs.projection';
import { blobsOnlyIn, referencedBlobs } from './blob-refs.queries';

describe('blob-refs projection', () => {
  const db = '11111111-1111-4111-8111-111111111111';
  const other = '22222222-2222-4222-8222-222222222222';
  const sha = (c: string) => c.repeat(64);
  const key = (collection: string, id: string) => itemKey(collection, 'memory', id);
  const ingested = (databaseId: string, collection: string, id: string, content: string) =>
    recorded('ItemIngested', { databaseId, itemKey: key(collection, id), collection, content: { sha256: content } });
  const chunked = (databaseId: string, collection: string, id: string, chunks: string) =>
    recorded('ItemChunked', { databaseId, itemKey: key(collection, id), chunksSha256: chunks });
  const graph = (databaseId: string, collection: string, id: string, g: string) =>
    recorded('GraphExtracted', { databaseId, itemKey: key(collection, id), collection, graphSha256: g });
  const inferred = (databaseId: string, collection: string, id: string, facts: string) =>
    recorded('InferenceCompleted', { databaseId, itemKey: key(collection, id), factsSha256: facts });
  const collectionDeleted = (databaseId: string, collection: string) => recorded('CollectionDeleted', { databaseId, collection });

  let url: string;
  let ds: DataSource;
  let schema: string;
  beforeAll(async () => {
    url = await createTestDatabase('blobrefs');
  });
  beforeEach(async () => {
    schema = `spec_${randomBytes(4).toString('hex')}`;
    ds = await openDataSource(url, { schema, poolSize: 1, name: 'crs-spec' });
    for (const ddl of blobRefsProjection.ddl) await ds.query(ddl);
  });
  afterEach(async () => {
    await ds.query(`DROP SCHEMA ${schema} CASCADE`);
    await ds.destroy();
  });
  const apply = async (...events: ReturnType<typeof recorded>[]) => {
    for (const e of events) await blobRefsProjection.apply(e, ds);
  };

  it('keeps a row per blob and collection, and a row per item (each event delivered twice)', async () => {
    const rows = await expectIdempotent(url, blobRefsProjection, [
      ingested(db, 'a', 'x', sha('1')),
      chunked(db, 'a', 'x', sha('2')),
      graph(db, 'a', 'x', sha('3')),
      ingested(db, 'a', 'y', sha('1')),
      graph(db, 'a', 'y', sha('3')),
    ]);
    expect(rows.rm_blob_refs.map((r) => r.replace(/"\\\\x([0-9a-f]{64})"/, '$1'))).toEqual([`(${db},${sha('1')},a)`, `(${db},${sha('2')},a)`, `(${db},${sha('3')},a)`]);
    expect(rows.rm_blob_ref_items).toHaveLength(2);
  });

  it('answers in lowercase hex: the blobs only a collection references, and which blobs are referenced', async () => {
    const own = randomBytes(32).toString('hex');
    const shared = randomBytes(32).toString('hex');
    const facts = randomBytes(32).toString('hex');
    await apply(
      ingested(db, 'a', 'x', own),
      chunked(db, 'a', 'x', shared),
      inferred(db, 'a', 'x', facts), // names no collection: its item's, from its ingest
      ingested(db, 'b', 'y', shared),
      ingested(other, 'a', 'z', sha('c')),
    );
    expect((await blobsOnlyIn(ds, db, 'a')).sort()).toEqual([own, facts].sort());
    expect(await blobsOnlyIn(ds, db, 'b')).toEqual([]);
    expect(await blobsOnlyIn(ds, other, 'a')).toEqual([sha('c')]);
    // Names that are not a stored blob's (upper case, not hex, another database's) are referenced by nobody.
    expect(await referencedBlobs(ds, db, [own, shared, own.toUpperCase(), 'not-a-sha', sha('c'), sha('d')])).toEqual(new Set([own, shared]));
    expect(await referencedBlobs(ds, db, [])).toEqual(new Set());
  });

  it('forgets a deleted collection: its blobs, and its items, whose later events then reference nothing', async () => {
    await apply(ingested(db, 'a', 'x', sha('1')), ingested(db, 'b', 'y', sha('1')), collectionDeleted(db, 'a'), chunked(db, 'a', 'x', sha('2')));
    expect(await referencedBlobs(ds, db, [sha('1'), sha('2')])).toEqual(new Set([sha('1')]));
    expect(await blobsOnlyIn(ds, db, 'b')).toEqual([sha('1')]);
    expect((await ds.query('SELECT count(*)::int AS n FROM rm_blob_ref_items'))[0].n).toBe(1);
    await apply(recorded('DatabaseDeleted', { databaseId: db }));
    expect(await referencedBlobs(ds, db, [sha('1')])).toEqual(new Set());
    expect((await ds.query('SELECT count(*)::int AS n FROM rm_blob_ref_items'))[0].n).toBe(0);
  });

  it('leaves out an event whose item key or blob hash the service could not have made, and goes on', async () => {
    const odd = recorded('ItemIngested', { databaseId: db, itemKey: 'k1', collection: 'a', content: { sha256: sha('1') } });
    const upper = recorded('GraphExtracted', { databaseId: db, itemKey: key('a', 'x'), collection: 'a', graphSha256: sha('A') });
    await blobRefsProjection.applyBatch!([odd, upper, ingested(db, 'a', 'x', sha('2'))], ds);
    await apply(odd, upper);
    expect(await blobsOnlyIn(ds, db, 'a')).toEqual([sha('2')]);
    expect((await ds.query('SELECT count(*)::int AS n FROM rm_blob_ref_items'))[0].n).toBe(1);
  });
});
