import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, Index, PhraseQuery } from '@lancedb/lancedb';
import { type ChunkDoc, LanceDbSearchIndex } from '@crs/search';
import { PHRASE_BOUNDARY } from '@crs/search/lancedb-phrase';
import { searchIndexContract, seededRandom } from './search-index.contract';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'crs-lance-'));
}

// The defaults: the contract's tables are small, so their searches are answered from the copies held in the process.
searchIndexContract('lancedb', async () => {
  const dir = tempDir();
  return {
    index: new LanceDbSearchIndex({ dir }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

// Every search in the engine, as for tables past residentMaxRows.
searchIndexContract('lancedb, no resident tables', async () => {
  const dir = tempDir();
  return {
    index: new LanceDbSearchIndex({ dir, residentMaxRows: 0 }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

function doc(i: number, vector: number[], text = `row ${i}`): ChunkDoc {
  return {
    chunkId: `r_${String(i).padStart(5, '0')}`,
    itemId: `item_${i}`,
    store: 'knowledge',
    collection: `c${i % 4}`,
    title: null,
    text,
    vector,
    principals: null,
    metadata: {},
    additionalMetadata: {},
    sourceType: 'file',
    isApp: false,
    createdAt: 1,
    updatedAt: 1,
    expiresAt: null,
    version: 1,
  };
}

const sortedChunkIds = (hits: { chunkId: string }[]) => hits.map((h) => h.chunkId).sort();

/** Poll a condition without sleeping blindly; fail after a bound. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('LanceDbSearchIndex (engine specifics)', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const newDir = () => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };

  it('builds an IVF_FLAT cosine index past the size threshold and still finds the exact nearest', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, vectorIndexThreshold: 300, indexRefreshDelayMs: -1 });
    const random = seededRandom(3);
    const docs = Array.from({ length: 400 }, (_, i) => doc(i, Array.from({ length: 16 }, () => random() * 2 - 1)));
    await index.createIndex('ivf', { dimensions: 16 });
    await index.upsert('ivf', docs);
    await index.optimize('ivf');

    const db = await connect(dir);
    const table = await db.openTable('ivf');
    const indices = await table.listIndices();
    expect(indices.map((i) => [i.name, i.indexType]).sort()).toEqual([
      ['acl_idx', 'LabelList'],
      ['chunk_id_idx', 'BTree'],
      ['collection_idx', 'Bitmap'],
      ['expires_key_idx', 'BTree'],
      ['filter_kv_idx', 'LabelList'],
      ['fts_text_idx', 'FTS'],
      ['is_app_idx', 'Bitmap'],
      ['item_id_idx', 'BTree'],
      ['vector_idx', 'IvfFlat'],
    ]);
    table.close();
    db.close();

    for (const i of [0, 123, 399]) {
      const hits = await index.vectorSearch('ivf', docs[i].vector, { limit: 3, filter: { collections: [docs[i].collection] } });
      expect(hits[0].chunkId).toBe(docs[i].chunkId);
      expect(hits[0].score).toBeCloseTo(1, 5);
    }
    // Rows written after the index was built are searched too.
    await index.upsert('ivf', [doc(1000, Array.from({ length: 16 }, (_, k) => (k === 3 ? 1 : 0)))]);
    expect((await index.vectorSearch('ivf', Array.from({ length: 16 }, (_, k) => (k === 3 ? 1 : 0)), { limit: 1 }))[0].chunkId).toBe('r_01000');
    await index.close();
  });

  it('retrains the vector index whole once optimizes have left more deltas than allowed, and still finds the exact nearest', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, vectorIndexThreshold: 300, maxVectorIndexDeltas: 2, indexRefreshDelayMs: -1 });
    const random = seededRandom(5);
    const vector = () => Array.from({ length: 16 }, () => random() * 2 - 1);
    await index.createIndex('deltas', { dimensions: 16 });
    const db = await connect(dir);
    const table = await db.openTable('deltas');
    const deltas = async () => {
      await table.checkoutLatest();
      return (await table.indexStats('vector_idx'))!.numIndices;
    };
    const docs: ChunkDoc[] = [];
    const seen: number[] = [];
    for (let round = 0; round < 6; round++) {
      const batch = Array.from({ length: round === 0 ? 400 : 40 }, (_, k) => doc(docs.length + k, vector()));
      docs.push(...batch);
      await index.upsert('deltas', batch);
      await index.optimize('deltas'); // each optimize that folds new rows in adds a delta
      seen.push((await deltas())!);
    }
    // Deltas grow by one per optimize (1, 2) until the third would pass the limit: then one index again.
    expect(seen.slice(0, 3)).toEqual([1, 2, 1]);
    expect(Math.max(...seen)).toBeLessThanOrEqual(2);
    for (const i of [0, 401, docs.length - 1]) {
      const hits = await index.vectorSearch('deltas', docs[i].vector, { limit: 1 });
      expect(hits[0].chunkId).toBe(docs[i].chunkId);
    }
    table.close();
    db.close();
    await index.close();
  });

  it('upgrades a table made before the ACL, packed lean and expiry key columns and the scalar indexes, with the same filtered results before and after', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await index.createIndex('old', { dimensions: 2 });
    const principals = (i: number): string[] | null => (i % 4 === 0 ? null : i % 4 === 1 ? ['alice'] : i % 4 === 2 ? ['__public__'] : []);
    const docs = Array.from({ length: 48 }, (_, i) => ({
      ...doc(i, [1, i / 48], `shared words row ${i}`),
      expiresAt: i % 5 === 0 ? 1000 : null,
      isApp: i % 3 === 0,
      metadata: { team: i % 2 ? 'a' : 'b' },
      principals: principals(Math.floor(i / 2)),
    }));
    await index.upsert('old', docs);
    await index.close();
    // The table as older versions of the adapter left it: no ACL, packed lean or expiry key column, the FTS index only.
    const db = await connect(dir);
    const table = await db.openTable('old');
    for (const i of await table.listIndices()) if (i.name !== 'fts_text_idx') await table.dropIndex(i.name);
    await table.dropColumns(['acl', 'lean', 'expires_key']);
    expect((await table.schema()).fields.map((f) => f.name)).not.toContain('lean');
    expect((await table.schema()).fields.map((f) => f.name)).not.toContain('expires_key');
    expect((await table.listIndices()).map((i) => i.name)).toEqual(['fts_text_idx']);

    const filter = { collections: ['c1', 'c2'], now: 2000, includeApps: false, metadata: { team: 'a' }, principalsAny: ['bob'] };
    const expected = (all: ChunkDoc[]) =>
      all
        .filter((d) => ['c1', 'c2'].includes(d.collection) && (d.expiresAt === null || d.expiresAt > 2000) && !d.isApp && d.metadata.team === 'a')
        .filter((d) => d.principals === null || d.principals.includes('__public__') || d.principals.includes('bob'))
        .map((d) => d.chunkId)
        .sort();
    const search = async (ix: LanceDbSearchIndex) => {
      const full = [await ix.vectorSearch('old', [1, 0.5], { limit: 48, filter }), await ix.keywordSearch('old', 'shared', { limit: 48, filter })];
      const lean = [await ix.vectorSearch('old', [1, 0.5], { limit: 48, filter, fields: 'lean' }), await ix.keywordSearch('old', 'shared', { limit: 48, filter, fields: 'lean' })];
      // The lean searches (the packed column, computed for the old rows at open) carry the same fields as the full ones.
      for (const [k, hits] of lean.entries()) {
        const byId = new Map(full[k].map((c) => [c.chunkId, c.doc]));
        for (const c of hits) expect(c.doc).toEqual({ chunkId: c.chunkId, itemId: byId.get(c.chunkId)!.itemId, text: byId.get(c.chunkId)!.text, version: byId.get(c.chunkId)!.version });
        expect(hits.map((c) => c.chunkId).sort()).toEqual(full[k].map((c) => c.chunkId).sort());
      }
      return full.map((hits) => hits.map((c) => c.chunkId).sort());
    };
    expect(expected(docs).length).toBeGreaterThan(0);
    expect(expected(docs).length).toBeLessThan(docs.length / 4);

    const upgraded = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    expect(await search(upgraded)).toEqual([expected(docs), expected(docs)]); // columns added at open, indexes not yet
    await upgraded.optimize('old');
    await table.checkoutLatest();
    expect((await table.listIndices()).map((i) => i.name).sort()).toEqual(['acl_idx', 'chunk_id_idx', 'collection_idx', 'expires_key_idx', 'filter_kv_idx', 'fts_text_idx', 'is_app_idx', 'item_id_idx']);
    expect(await search(upgraded)).toEqual([expected(docs), expected(docs)]);
    // Writes to the upgraded table carry the columns too (a future expiry passes the filter, a past one does not).
    const added = [
      { ...docs[1], chunkId: 'r_new_1', principals: ['bob'] },
      { ...docs[1], chunkId: 'r_new_2', principals: ['carol'] },
      { ...docs[1], chunkId: 'r_new_3', principals: ['bob'], expiresAt: 3000 },
      { ...docs[1], chunkId: 'r_new_4', principals: ['bob'], expiresAt: 2000 },
    ];
    await upgraded.upsert('old', added);
    expect(await search(upgraded)).toEqual([expected([...docs, ...added]), expected([...docs, ...added])]);
    expect(expected([...docs, ...added])).toContain('r_new_3');
    expect(expected([...docs, ...added])).not.toContain('r_new_4');
    expect((await upgraded.getChunks('old', ['r_new_1', 'r_new_2'])).map((d) => d.principals)).toEqual([['bob'], ['carol']]);
    table.close();
    db.close();
    await upgraded.close();
  });

  it('folds new rows into the full-text index in the background after writes', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 20 });
    await index.createIndex('bg', { dimensions: 2 });
    await index.upsert('bg', [doc(1, [1, 0], 'background indexing works')]);
    const db = await connect(dir, { readConsistencyInterval: 0 });
    const table = await db.openTable('bg');
    expect((await table.indexStats('fts_text_idx'))?.numUnindexedRows).toBe(1);
    await eventually(async () => (await table.indexStats('fts_text_idx'))?.numUnindexedRows === 0);
    expect((await table.indexStats('fts_text_idx'))?.numIndexedRows).toBe(1);
    table.close();
    db.close();
    expect((await index.keywordSearch('bg', 'indexing', { limit: 1 }))[0].chunkId).toBe('r_00001');
    await index.close();
  });

  it('folds rows another process left out of the full-text index once it opens the table, without a write of its own', async () => {
    const dir = newDir();
    const stats = async () => (await (await connect(dir)).openTable('leftover')).indexStats('fts_text_idx');
    // A writer whose background optimize never runs (as a process that exits right after its last write). Searches in
    // the engine (no resident copies), whose first keyword search folds what is there.
    const writer = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, residentMaxRows: 0 });
    await writer.createIndex('leftover', { dimensions: 2 });
    await writer.upsert('leftover', [doc(1, [1, 0], 'first batch of lanterns')]);
    await writer.keywordSearch('leftover', 'lanterns', { limit: 5 }); // the first keyword search folds what is there
    await writer.upsert('leftover', Array.from({ length: 5 }, (_, i) => doc(10 + i, [1, i], `later lanterns ${i}`)));
    await writer.close();
    expect((await stats())?.numUnindexedRows).toBe(5);

    const reader = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 50, residentMaxRows: 0 });
    expect(await reader.keywordSearch('leftover', 'lanterns', { limit: 10 })).toHaveLength(6); // scanned flat meanwhile
    await eventually(async () => (await stats())?.numUnindexedRows === 0);
    await reader.close();
  });

  /** The full-text index as it was made before phrase queries were checked in process: with word positions. */
  const positionalFts = () =>
    Index.fts({ withPosition: true, baseTokenizer: 'simple', language: 'English', stem: true, removeStopWords: true, lowercase: true, asciiFolding: true });
  const ftsDetails = async (dir: string, name: string) => {
    const db = await connect(dir, { readConsistencyInterval: 0 });
    const table = await db.openTable(name);
    const details = (await table.listIndices()).find((i) => i.name === 'fts_text_idx')?.indexDetails as { with_position: boolean };
    table.close();
    db.close();
    return details;
  };
  const phraseTexts = [
    'The state of the art is here', 'state art museum', 'state of art', 'running shoes are great', 'he runs shoe shops',
    'Café Crème brûlée', 'cafe creme', 'state, of the art!', 'the art of the state', 'new-york city', 'new york city', 'state the art',
  ];
  const phrases = ['state of the art', 'state art', 'running shoes', 'run shoe', 'cafe creme', 'new york', 'the art', 'of the', 'art state', 'york city museum'];

  it('keeps no word positions in the full-text index, and answers phrase queries as LanceDB\'s phrase query over positions does', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await index.createIndex('phr', { dimensions: 2 });
    await index.upsert('phr', phraseTexts.map((text, i) => doc(i, [1, i], text)));
    await index.optimize('phr');
    expect((await ftsDetails(dir, 'phr')).with_position).toBe(false);

    // The reference: the same texts in a table whose index keeps positions, asked with LanceDB's own phrase query.
    const refDir = newDir();
    const db = await connect(refDir);
    const ref = await db.createTable('ref', phraseTexts.map((fts_text, i) => ({ id: `r_${String(i).padStart(5, '0')}`, fts_text })));
    await ref.createIndex('fts_text', { config: positionalFts() });
    let matched = 0;
    for (const phrase of phrases) {
      const expected = (await ref.query().fullTextSearch(new PhraseQuery(phrase, 'fts_text')).select(['id']).limit(50).toArray()).map((r) => r.id as string);
      const got = (await index.keywordSearch('phr', phrase, { limit: 50, operator: 'phrase' })).map((h) => h.chunkId);
      expect([phrase, [...got].sort()]).toEqual([phrase, [...expected].sort()]);
      matched += got.length;
    }
    expect(matched).toBeGreaterThan(10); // the phrases do match, so the comparison says something
    ref.close();
    db.close();
    await index.close();
  });

  it('finds phrase matches ranked below many and-matches of the same words, asking for more until enough pass, up to a bound', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await index.createIndex('deep', { dimensions: 2 });
    const filler = 'words about something else entirely and at some length so this chunk scores lower than short ones';
    await index.upsert('deep', [
      ...Array.from({ length: 60 }, (_, i) => doc(i, [1, i], 'beta alpha')), // both words, not the phrase: better BM25
      ...[100, 101, 102].map((i) => doc(i, [1, i], `${filler} alpha beta ${filler}`)),
    ]);
    const and = await index.keywordSearch('deep', 'alpha beta', { limit: 63, operator: 'and' });
    expect(and.slice(0, 60).every((h) => Number(h.chunkId.slice(2)) < 60)).toBe(true); // the phrase matches rank last
    const two = await index.keywordSearch('deep', 'alpha beta', { limit: 2, operator: 'phrase' });
    expect(two).toHaveLength(2);
    expect(two.every((h) => ['r_00100', 'r_00101', 'r_00102'].includes(h.chunkId))).toBe(true);
    expect(two[0].score).toBeGreaterThanOrEqual(two[1].score);
    expect(sortedChunkIds(await index.keywordSearch('deep', 'alpha beta', { limit: 10, operator: 'phrase' }))).toEqual(['r_00100', 'r_00101', 'r_00102']);
    await index.close();
    // The work is bounded: past phraseMatchesChecked matches (or twice the limit) none more is checked.
    const bounded = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, phraseMatchesChecked: 40 });
    expect(await bounded.keywordSearch('deep', 'alpha beta', { limit: 2, operator: 'phrase' })).toEqual([]);
    expect(sortedChunkIds(await bounded.keywordSearch('deep', 'alpha beta', { limit: 40, operator: 'phrase' }))).toEqual(['r_00100', 'r_00101', 'r_00102']);
    await bounded.close();
  });

  it('checks a text that holds the word put between texts tokenized together as any other', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await index.createIndex('edge', { dimensions: 2 });
    await index.upsert('edge', [
      doc(1, [1, 0], `x ${PHRASE_BOUNDARY} red apples`),
      doc(2, [1, 1], `red ${PHRASE_BOUNDARY} apples`),
      doc(3, [1, 2], 'apples red'),
      doc(4, [1, 3], 'red apples'),
    ]);
    expect(sortedChunkIds(await index.keywordSearch('edge', 'red apples', { limit: 10, operator: 'phrase' }))).toEqual(['r_00001', 'r_00004']);
    expect(sortedChunkIds(await index.keywordSearch('edge', `red ${PHRASE_BOUNDARY}`, { limit: 10, operator: 'phrase' }))).toEqual(['r_00002']);
    await index.close();
  });

  it('replaces a full-text index made with word positions by one without, in the background, answering alike before and after', async () => {
    const dir = newDir();
    const writer = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await writer.createIndex('old', { dimensions: 2 });
    await writer.upsert('old', phraseTexts.map((text, i) => doc(i, [1, i], text)));
    await writer.optimize('old');
    await writer.close();
    const db = await connect(dir);
    const table = await db.openTable('old');
    await table.createIndex('fts_text', { config: positionalFts(), replace: true });
    table.close();
    db.close();
    expect((await ftsDetails(dir, 'old')).with_position).toBe(true);

    const ask = async (index: LanceDbSearchIndex) =>
      Promise.all([...phrases.map((p) => index.keywordSearch('old', p, { limit: 50, operator: 'phrase' })), index.keywordSearch('old', 'state art', { limit: 50, operator: 'and' })]).then(
        (all) => all.map((hits) => sortedChunkIds(hits)),
      );
    const first = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 }); // never refreshes: answers from the old index
    const before = await ask(first);
    await first.close();
    const reader = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 20 });
    await reader.keywordSearch('old', 'state', { limit: 1 }); // opens the table, which schedules the refresh
    await eventually(async () => (await ftsDetails(dir, 'old')).with_position === false);
    expect(await ask(reader)).toEqual(before);
    expect(before.flat().length).toBeGreaterThan(10);
    await reader.close();
  });

  it('deleteItemVersions commits a table version only when some item holds a chunk at or below its version', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await index.createIndex('dv', { dimensions: 2 });
    await index.upsert('dv', [1, 2, 3].map((i) => ({ ...doc(i, [1, i]), version: 10 })));
    const db = await connect(dir, { readConsistencyInterval: 0 });
    const table = await db.openTable('dv');
    const before = await table.version();
    // What ingest and a rebuild ask after each write: earlier versions of items that have none (and of unknown items).
    await index.deleteItemVersions('dv', [{ itemId: 'item_1', version: 9 }, { itemId: 'item_2', version: 9 }, { itemId: 'item_9', version: 99 }]);
    expect(await table.version()).toBe(before);
    expect(await index.count('dv')).toBe(3);
    // One stale item among them: one commit, and only its chunks go (the highest version asked for an item counts).
    await index.deleteItemVersions('dv', [{ itemId: 'item_1', version: 9 }, { itemId: 'item_2', version: 5 }, { itemId: 'item_2', version: 10 }]);
    expect(await table.version()).toBe(before + 1);
    expect((await index.listChunks('dv')).map((c) => c.itemId)).toEqual(['item_1', 'item_3']);
    table.close();
    db.close();
    await index.close();
  });

  it('keeps its caches within the bytes it was given (the session reaches LanceDB)', async () => {
    const dir = newDir();
    const bound = 256 * 1024;
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, indexCacheBytes: bound, metadataCacheBytes: bound });
    await index.createIndex('cached', { dimensions: 2 });
    for (let round = 0; round < 6; round++) {
      await index.upsert('cached', Array.from({ length: 200 }, (_, i) => doc(round * 200 + i, [1, i], `cache round ${round} row ${i} ${'word '.repeat(20)}`)));
      await index.optimize('cached');
      await index.keywordSearch('cached', `round ${round}`, { limit: 10 });
    }
    const usage = index.cacheUsage().search_engine;
    // Something is cached (a session that never reached the engine reports nothing), and no more than allowed.
    expect(usage.entries).toBeGreaterThan(0);
    expect(usage.bytes).toBeGreaterThan(0);
    expect(usage.bytes).toBeLessThanOrEqual(2 * bound + 64 * 1024);
    await index.close();
  });

  it('removes superseded table versions once they pass the retention, also when no write follows', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 0, versionRetentionMs: 300 });
    await index.createIndex('aged', { dimensions: 2 });
    for (let i = 0; i < 5; i++) await index.upsert('aged', [doc(i, [1, i], `version ${i}`)]);
    const db = await connect(dir, { readConsistencyInterval: 0 });
    const table = await db.openTable('aged');
    try {
      expect((await table.listVersions()).length).toBeGreaterThan(5);
      // The background refresh folds the writes; the cleanup pass after it removes what the refresh still had to keep.
      // Listing reads every version's manifest, so a listing that meets one being removed is simply asked again.
      const versions = () => table.listVersions().then((v) => v.length, () => Infinity);
      await eventually(async () => (await versions()) <= 2, 15_000);
      expect(await index.count('aged')).toBe(5);
      expect((await index.keywordSearch('aged', 'version', { limit: 10 })).length).toBe(5);
    } finally {
      table.close();
      db.close();
      await index.close();
    }
  });

  it('removes the empty index directories superseded versions leave under _indices, once older than the retention, and only those', async () => {
    const dir = newDir();
    const retentionMs = 150;
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, versionRetentionMs: retentionMs });
    await index.createIndex('swept', { dimensions: 2 });
    const indices = join(dir, 'swept.lance', '_indices');
    const emptyDirs = () =>
      readdirSync(indices)
        .map((name) => join(indices, name))
        .filter((path) => statSync(path).isDirectory() && readdirSync(path).length === 0);
    // An old directory holding a file (whatever it is, it is not empty).
    const holding = join(indices, 'holding-a-file');
    mkdirSync(holding);
    writeFileSync(join(holding, 'part.lance'), 'x');
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(holding, longAgo, longAgo);
    const rounds = 16;
    const pause = () => new Promise((resolve) => setTimeout(resolve, retentionMs + 20));
    for (let i = 0; i < rounds; i++) {
      await index.upsert('swept', [doc(2 * i, [1, i], `swept pair ${i}`), doc(2 * i + 1, [i, 1], `swept pair ${i}`)]);
      if (i % 4 === 3) await pause(); // superseded versions age past the retention
      await index.optimize('swept'); // a new copy of each of the 8 indexes, in new directories, every time
    }
    // Idle, as the cleanup pass after the last write finds it: every superseded copy is removed (their directories
    // emptied), and one retention later swept by the next pass.
    await pause();
    await index.optimize('swept');
    await pause();
    const fresh = join(indices, 'being-written');
    mkdirSync(fresh); // what another process may have there: an index directory it is writing right now
    const lastOptimize = Date.now();
    await index.optimize('swept');
    // LanceDB's cleanup left the directories of the copies each optimize superseded (8 to 16, over a hundred here); the sweep
    // removed every one that was empty and older than the retention.
    expect(emptyDirs().filter((path) => statSync(path).mtimeMs < lastOptimize - retentionMs)).toEqual([]);
    expect(readdirSync(indices).length).toBeLessThanOrEqual(3 * 8 + 2);
    // Neither a directory modified moments ago nor one holding a file is removed.
    expect(existsSync(fresh)).toBe(true);
    expect(existsSync(join(holding, 'part.lance'))).toBe(true);
    rmSync(fresh, { recursive: true });
    rmSync(holding, { recursive: true });
    // Every row still answers, from the indexes the live version refers to.
    expect(await index.count('swept')).toBe(2 * rounds);
    expect((await index.keywordSearch('swept', 'swept', { limit: 100 })).length).toBe(2 * rounds);
    expect((await index.keywordSearch('swept', 'swept pair', { limit: 100, operator: 'phrase' })).length).toBe(2 * rounds);
    expect((await index.keywordSearch('swept', 'pair 7', { limit: 100, operator: 'and', filter: { collections: ['c2'] } })).map((c) => c.chunkId)).toEqual(['r_00014']);
    expect((await index.vectorSearch('swept', [1, 5], { limit: 1 }))[0].chunkId).toBe('r_00010');
    expect((await index.getChunks('swept', ['r_00000', 'r_00031'])).map((d) => d.chunkId)).toEqual(['r_00000', 'r_00031']);
    await index.close();
  });

  it('sees writes made by another instance (another process) on the same directory', async () => {
    const dir = newDir();
    const writer = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    const reader = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await writer.createIndex('shared', { dimensions: 2 });
    expect(await reader.count('shared')).toBe(0); // the reader now holds an open table handle
    await writer.upsert('shared', [doc(1, [1, 0], 'shared table')]);
    expect(await reader.count('shared')).toBe(1);
    expect((await reader.keywordSearch('shared', 'shared', { limit: 1 }))[0].chunkId).toBe('r_00001');
    await writer.deleteItems('shared', ['item_1'], 1);
    expect(await reader.count('shared')).toBe(0);
    await writer.close();
    await reader.close();
  });

  it('searches of a table found empty find the rows another instance writes afterwards', async () => {
    const dir = newDir();
    const writer = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    const reader = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await writer.createIndex('was_empty', { dimensions: 2 });
    // Searched while empty (the reader skips the engine search then, and must not keep answering "empty").
    expect(await reader.keywordSearch('was_empty', 'lighthouse', { limit: 5 })).toEqual([]);
    expect(await reader.vectorSearch('was_empty', [1, 0], { limit: 5 })).toEqual([]);
    await writer.upsert('was_empty', [doc(1, [1, 0], 'lighthouse keeper')]);
    expect((await reader.keywordSearch('was_empty', 'lighthouse', { limit: 5 })).map((c) => c.chunkId)).toEqual(['r_00001']);
    expect((await reader.vectorSearch('was_empty', [1, 0], { limit: 5 })).map((c) => c.chunkId)).toEqual(['r_00001']);
    await writer.close();
    await reader.close();
  });

  it('two instances (processes) upserting the same new chunks at once store each chunk once (LanceDB alone stores it twice)', async () => {
    const dir = newDir();
    // One checks for other writers on every read, one never does (it must still merge against the latest commit);
    // one also optimizes in the background meanwhile.
    const a = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 0 });
    const b = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, readConsistencyIntervalSeconds: null });
    await a.createIndex('raced', { dimensions: 2 });
    for (let round = 0; round < 15; round++) {
      const docs = [doc(round, [1, 0], `raced ${round}`), doc(100 + round, [0, 1], `raced again ${round}`)];
      await Promise.all([a.upsert('raced', docs), b.upsert('raced', docs)]);
    }
    const rows = await a.listChunks('raced', { limit: 1000, offset: 0 });
    expect({ rows: rows.length, distinct: new Set(rows.map((d) => d.chunkId)).size }).toEqual({ rows: 30, distinct: 30 });
    await a.close();
    await b.close();
  });

  it('takes over a table lock its holder left when it was killed, once stale', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await index.createIndex('orphan', { dimensions: 2 });
    const lockDir = join(dir, '.locks', 'orphan.lock');
    mkdirSync(lockDir, { recursive: true });
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(lockDir, longAgo, longAgo);
    await index.upsert('orphan', [doc(1, [1, 0], 'after a crash')]);
    expect(await index.count('orphan')).toBe(1);
    expect(existsSync(lockDir)).toBe(false);
    // The lock directory removed under a running instance: made again (not retried for ever).
    rmSync(join(dir, '.locks'), { recursive: true, force: true });
    await index.upsert('orphan', [doc(2, [0, 1], 'after a cleanup')]);
    expect(await index.count('orphan')).toBe(2);
    await index.close();
  });

  it('survives two instances (processes) creating the same index at once', async () => {
    const dir = newDir();
    const instances = [1, 2, 3].map(() => new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 }));
    await Promise.all(instances.map((index) => index.createIndex('both', { dimensions: 2 })));
    await instances[0].upsert('both', [doc(1, [1, 0], 'created twice')]);
    for (const index of instances) expect((await index.keywordSearch('both', 'twice', { limit: 1 }))[0].chunkId).toBe('r_00001');
    await Promise.all(instances.map((index) => index.close()));
  });

  it('drops a table that has pending background work, and can re-create it', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 0 });
    await index.createIndex('gone', { dimensions: 2 });
    await index.upsert('gone', [doc(1, [1, 0])]);
    await index.dropIndex('gone');
    expect(await index.indexExists('gone')).toBe(false);
    await index.createIndex('gone', { dimensions: 2 });
    expect(await index.count('gone')).toBe(0);
    await index.close();
    await expect(index.count('gone')).rejects.toThrow(/closed/);
  });
});
