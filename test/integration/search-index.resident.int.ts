import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Candidate, type ChunkDoc, type KeywordOperator, LanceDbSearchIndex, type SearchFilter } from '@crs/search';
import { ResidentTable } from '@crs/search/lancedb-resident-table';
import { seededRandom } from './search-index.contract';

/**
 * Small tables are searched from a copy held in the process (lancedb-resident-table.ts). The contract suite runs with
 * and without the copies; here the copy's answers are compared with the engine's on the same table, score for score,
 * and its bounds and freshness are checked.
 */

const dirs: string[] = [];
function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crs-resident-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const VOCABULARY = [
  'lantern', 'lanterns', 'river', 'rivers', 'running', 'runs', 'stone', 'bridge', 'garden', 'gardens', 'café', 'cafe', 'tea',
  'market', 'winter', 'summer', 'light', 'lights', 'paper', 'boat', 'boats', 'harbour', 'north', 'south', 'city', 'old',
  'the', 'of', 'and', 'a', 'is', 'in', 'to', 'with', 'new-york', "o'brien", 'x42', 'état',
];

/** Texts of skewed word frequencies and lengths (common words often, some texts long), titles on some. */
function corpus(count: number, dimensions: number): ChunkDoc[] {
  const random = seededRandom(11);
  const word = () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 2)];
  return Array.from({ length: count }, (_, i) => ({
    chunkId: `c_${String(i).padStart(4, '0')}`,
    itemId: `item_${i % 150}`,
    store: i % 5 === 0 ? 'knowledge' : 'memory',
    collection: `col${i % 3}`,
    title: i % 7 === 0 ? `${word()} ${word()}` : null,
    text: Array.from({ length: 3 + Math.floor(random() * (i % 10 === 0 ? 60 : 15)) }, word).join(' '),
    vector: Array.from({ length: dimensions }, () => random() - 0.5),
    principals: i % 4 === 0 ? ['alice'] : i % 4 === 1 ? ['bob', '__public__'] : null,
    metadata: { team: i % 2 ? 'red' : 'blue', rank: i % 3 },
    additionalMetadata: {},
    sourceType: 'file',
    isApp: i % 6 === 0,
    createdAt: 1,
    updatedAt: 1,
    expiresAt: i % 9 === 0 ? 1_000 : null,
    version: 1,
  }));
}

/**
 * Hits best first, hits whose scores are equal (to float32 precision) ordered by id: the engines may order ties apart,
 * and when the list is cut at `limit` may keep different ones of the hits tied at the cut (those show as the tie).
 */
function ranked(hits: Candidate[], limit: number): { ids: string[]; scores: number[] } {
  const rows = hits.map((h) => ({ id: h.chunkId, score: h.score })).sort((a, b) => b.score - a.score);
  const tied = (a: number, b: number) => Math.abs(a - b) <= 1e-5 * Math.max(Math.abs(a), Math.abs(b));
  const groups: { id: string; score: number }[][] = [];
  for (const row of rows) {
    const last = groups[groups.length - 1];
    if (last && tied(last[0].score, row.score)) last.push(row);
    else groups.push([row]);
  }
  const ids = groups.flatMap((group, g) =>
    g === groups.length - 1 && rows.length === limit ? group.map(() => '(tied at the cut)') : group.map((r) => r.id).sort(),
  );
  return { ids, scores: rows.map((r) => r.score) };
}

describe('LanceDbSearchIndex resident copies of small tables', () => {
  const DIM = 8;
  const filters: (SearchFilter | undefined)[] = [
    undefined,
    { collections: ['col1', 'col2'] },
    { stores: ['memory'], principalsAny: ['alice'], now: 5_000 },
    { includeApps: false, metadata: { team: 'red', rank: [0, 2] } },
    { principalsAny: [], itemIds: ['item_3', 'item_4', 'item_5', 'item_60'] },
  ];

  it('answers keyword and vector searches as the engine does, score for score, with every filter', async () => {
    const dir = newDir();
    const engine = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, residentMaxRows: 0 });
    const resident = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await engine.createIndex('parity', { dimensions: DIM });
    const docs = corpus(400, DIM);
    docs[7].vector = new Array(DIM).fill(0); // no cosine: left out by both
    await engine.upsert('parity', docs);
    await engine.optimize('parity'); // every row in the engine's indexes: its answers are final
    const random = seededRandom(3);
    const queries = Array.from({ length: 30 }, () =>
      Array.from({ length: 1 + Math.floor(random() * 6) }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]).join(' '),
    );
    queries.push('lantern lantern river', 'the of and', 'LANTERNS Café', 'new-york o\'brien', 'unknownword lantern');
    let compared = 0;
    for (const filter of filters) {
      for (const query of queries) {
        for (const operator of ['or', 'and'] as KeywordOperator[]) {
          const want = await engine.keywordSearch('parity', query, { limit: 12, operator, filter });
          const got = await resident.keywordSearch('parity', query, { limit: 12, operator, filter });
          const [a, b] = [ranked(got, 12), ranked(want, 12)];
          expect({ query, operator, filter, ids: a.ids }).toEqual({ query, operator, filter, ids: b.ids });
          a.scores.forEach((score, k) => expect(Math.abs(score - b.scores[k])).toBeLessThanOrEqual(1e-5 * b.scores[k]));
          compared += want.length;
        }
      }
      for (let i = 0; i < 10; i++) {
        const vector = i === 0 ? new Array(DIM).fill(0) : Array.from({ length: DIM }, () => random() - 0.5);
        const want = await engine.vectorSearch('parity', vector, { limit: 15, filter });
        const got = await resident.vectorSearch('parity', vector, { limit: 15, filter });
        expect(got.map((h) => h.chunkId)).toEqual(want.map((h) => h.chunkId));
        got.forEach((h, k) => expect(h.score).toBeCloseTo(want[k].score, 5));
        expect(got.map((h) => h.doc)).toEqual(want.map((h) => h.doc));
        compared += want.length;
      }
    }
    expect(compared).toBeGreaterThan(2000); // the comparison is not vacuous
    expect(resident.cacheUsage().search_resident).toEqual({ bytes: expect.any(Number), entries: 1 });
    await engine.close();
    await resident.close();
  });

  it('follows every commit of the table, its own and another instance\'s, before answering', async () => {
    const dir = newDir();
    const reader = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    const writer = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1 });
    await writer.createIndex('fresh', { dimensions: DIM });
    const docs = corpus(50, DIM);
    await writer.upsert('fresh', docs.slice(0, 40));
    const ids = async (query: string) => (await reader.keywordSearch('fresh', query, { limit: 100 })).map((h) => h.chunkId).sort();
    expect(await ids('zebra')).toEqual([]);
    await writer.upsert('fresh', [{ ...docs[3], text: 'a zebra crossing', version: 2 }, { ...docs[45], text: 'zebra stripes' }]);
    expect(await ids('zebra')).toEqual(['c_0003', 'c_0045']);
    await writer.upsert('fresh', [{ ...docs[3], text: 'an older zebra', version: 1 }]); // older: ignored
    expect((await reader.keywordSearch('fresh', 'zebra', { limit: 5 })).find((h) => h.chunkId === 'c_0003')?.doc.text).toBe('a zebra crossing');
    await writer.deleteItems('fresh', ['item_45'], 1);
    expect(await ids('zebra')).toEqual(['c_0003']);
    await reader.deleteWhere('fresh', { collections: [docs[3].collection] });
    expect(await ids('zebra')).toEqual([]);
    expect(await reader.count('fresh')).toBe((await reader.vectorSearch('fresh', docs[0].vector, { limit: 100 })).length);
    await writer.close();
    await reader.close();
  });

  it('applies its own writes to the copy without reading the table again, and still answers as the engine after any mix of them', async () => {
    const dir = newDir();
    const resident = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: 30, versionRetentionMs: 0 });
    const engine = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, residentMaxRows: 0 });
    await resident.createIndex('mixed', { dimensions: DIM });
    const docs = corpus(120, DIM);
    await resident.upsert('mixed', docs.slice(0, 60));
    await resident.keywordSearch('mixed', 'lantern', { limit: 5 }); // the copy is made
    const readsTable = jest.spyOn(ResidentTable.prototype, 'versions'); // what a copy compares with the table's rows
    const random = seededRandom(21);
    const pick = () => docs[Math.floor(random() * docs.length)];
    const vector = Array.from({ length: DIM }, () => random() - 0.5);
    const everything = async (index: LanceDbSearchIndex) =>
      (await index.vectorSearch('mixed', vector, { limit: 1000 })).map((h) => `${h.chunkId} v${h.doc.version} ${h.doc.text}`).sort();
    for (let step = 0; step < 40; step++) {
      const roll = random();
      if (roll < 0.45) {
        const batch = Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({ ...pick(), version: 1 + Math.floor(random() * 5), text: `step ${step} ${pick().text}` }));
        await resident.upsert('mixed', batch);
      } else if (roll < 0.6) await resident.deleteItems('mixed', [pick().itemId, pick().itemId], 1 + Math.floor(random() * 5));
      else if (roll < 0.75) await resident.deleteItemVersions('mixed', [{ itemId: pick().itemId, version: 1 + Math.floor(random() * 5) }, { itemId: pick().itemId, version: 2 }]);
      else if (roll < 0.8) await resident.deleteWhere('mixed', { collections: ['col2'], itemIds: [pick().itemId, pick().itemId] });
      else await new Promise((resolve) => setTimeout(resolve, 60)); // a background optimize commits
      expect({ step, rows: await everything(resident) }).toEqual({ step, rows: await everything(engine) });
    }
    expect(readsTable).not.toHaveBeenCalled();
    readsTable.mockRestore();
    // LanceDB's full-text statistics still count rows deleted or replaced since its index was made; the copy's are those
    // of the rows present. So the scores are compared with a table holding only those rows.
    const fresh = new LanceDbSearchIndex({ dir: newDir(), indexRefreshDelayMs: -1, residentMaxRows: 0 });
    await fresh.createIndex('mixed', { dimensions: DIM });
    await fresh.upsert('mixed', await engine.listChunks('mixed'));
    await fresh.optimize('mixed');
    for (let q = 0; q < 20; q++) {
      const query = `${pick().text.split(' ').slice(0, 2).join(' ')} lantern`;
      const [a, b] = [await resident.keywordSearch('mixed', query, { limit: 8 }), await fresh.keywordSearch('mixed', query, { limit: 8 })];
      expect({ query, ids: ranked(a, 8).ids }).toEqual({ query, ids: ranked(b, 8).ids });
      a.forEach((hit, k) => expect(Math.abs(hit.score - b[k].score)).toBeLessThanOrEqual(1e-5 * b[k].score));
    }
    await fresh.close();
    await engine.close();
    await resident.close();
  });

  it('leaves tables past residentMaxRows to the engine, and keeps the copies within their bytes, least recently used dropped', async () => {
    const dir = newDir();
    const index = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, residentMaxRows: 100 });
    for (const name of ['big', 'small_a', 'small_b']) await index.createIndex(name, { dimensions: DIM });
    await index.upsert('big', corpus(150, DIM));
    await index.upsert('small_a', corpus(60, DIM));
    await index.upsert('small_b', corpus(60, DIM));
    expect((await index.keywordSearch('big', 'lantern', { limit: 5 })).length).toBe(5);
    expect(index.cacheUsage().search_resident).toEqual({ bytes: 0, entries: 0 });
    await index.keywordSearch('small_a', 'lantern', { limit: 5 });
    const one = index.cacheUsage().search_resident;
    expect(one.entries).toBe(1);
    expect(one.bytes).toBeGreaterThan(60 * 100);
    await index.close();

    // Room for one copy only: the second table's copy pushes the first one out.
    const bounded = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, residentCacheBytes: Math.ceil(one.bytes * 1.5) });
    await bounded.keywordSearch('small_a', 'lantern', { limit: 5 });
    await bounded.keywordSearch('small_b', 'lantern', { limit: 5 });
    expect(bounded.cacheUsage().search_resident.entries).toBe(1);
    expect(bounded.cacheUsage().search_resident.bytes).toBeLessThanOrEqual(Math.ceil(one.bytes * 1.5));
    // A table larger than the whole budget is searched by the engine, and holds nothing.
    const tiny = new LanceDbSearchIndex({ dir, indexRefreshDelayMs: -1, residentCacheBytes: 1000 });
    expect((await tiny.keywordSearch('small_a', 'lantern', { limit: 5 })).length).toBe(5);
    expect(tiny.cacheUsage().search_resident).toEqual({ bytes: 0, entries: 0 });
    await bounded.close();
    await tiny.close();
  });
});
