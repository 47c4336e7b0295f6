import {
  type ChunkDoc,
  PUBLIC_PRINCIPAL,
  type SearchFilter,
  type SearchIndex,
  SearchIndexError,
} from '@crs/search';
import { seededRandom } from '@crs/bench/lib/prng';

/**
 * The SearchIndex contract, written once for every adapter: LanceDB (search-index.lancedb.int.ts, every `npm test`)
 * and Elasticsearch (search-index.elasticsearch.int.ts, when ELASTICSEARCH_URL names a server).
 */
export interface SearchIndexFixture {
  index: SearchIndex;
  /** Engine-specific cleanup after the index is closed (e.g. removing a temp directory). */
  cleanup?: () => Promise<void>;
}

const DIM = 8;
const T0 = 1_700_000_000_000;

/** Deterministic pseudo-random numbers (mulberry32), so failures reproduce. */
export { seededRandom };

function axis(i: number, dims = DIM): number[] {
  const v = new Array<number>(dims).fill(0);
  v[i] = 1;
  return v;
}

function chunk(overrides: Partial<ChunkDoc> & { chunkId: string }): ChunkDoc {
  return {
    itemId: `item_${overrides.chunkId}`,
    store: 'knowledge',
    collection: 'default',
    title: null,
    text: 'lorem ipsum',
    vector: axis(0),
    principals: null,
    metadata: {},
    additionalMetadata: {},
    sourceType: 'file',
    isApp: false,
    createdAt: T0,
    updatedAt: T0,
    expiresAt: null,
    version: 1,
    ...overrides,
  };
}

function ids(results: { chunkId: string }[]): string[] {
  return results.map((r) => r.chunkId);
}

function sortedIds(results: { chunkId: string }[]): string[] {
  return ids(results).sort();
}

function withoutVector(doc: ChunkDoc): Omit<ChunkDoc, 'vector'> {
  const { vector: _vector, ...rest } = doc;
  return rest;
}

export function searchIndexContract(engineName: string, createFixture: () => Promise<SearchIndexFixture>): void {
  describe(`SearchIndex contract (${engineName})`, () => {
    let fixture: SearchIndexFixture;
    let index: SearchIndex;
    const created: string[] = [];
    const run = `${process.pid.toString(36)}${Date.now().toString(36)}`;
    let counter = 0;

    /** A fresh physical index per test, so tests never see each other's chunks. */
    async function freshIndex(dimensions = DIM): Promise<string> {
      const name = `ct_${run}_${counter++}`;
      created.push(name);
      await index.createIndex(name, { dimensions });
      return name;
    }

    beforeAll(async () => {
      fixture = await createFixture();
      index = fixture.index;
    });

    afterAll(async () => {
      if (!index) return;
      for (const name of created) await index.dropIndex(name).catch(() => undefined);
      await index.close();
      await fixture.cleanup?.();
    });

    describe('lifecycle', () => {
      it('creates, reports and drops an index idempotently', async () => {
        const name = `ct_${run}_life`;
        created.push(name);
        expect(await index.indexExists(name)).toBe(false);
        await index.createIndex(name, { dimensions: DIM });
        await index.createIndex(name, { dimensions: DIM });
        expect(await index.indexExists(name)).toBe(true);
        expect(await index.count(name)).toBe(0);
        await index.dropIndex(name);
        expect(await index.indexExists(name)).toBe(false);
        await index.dropIndex(name);
        expect(await index.indexExists(name)).toBe(false);
      });

      it('survives concurrent creation of one index', async () => {
        const name = `ct_${run}_race`;
        created.push(name);
        await Promise.all([1, 2, 3].map(() => index.createIndex(name, { dimensions: DIM })));
        await index.upsert(name, [chunk({ chunkId: 'r', text: 'raced' })]);
        expect(ids(await index.keywordSearch(name, 'raced', { limit: 1 }))).toEqual(['r']);
      });

      it('refuses to re-create an index with other dimensions', async () => {
        const name = await freshIndex();
        await expect(index.createIndex(name, { dimensions: DIM + 1 })).rejects.toMatchObject({ code: 'dimension_mismatch' });
      });

      it('rejects index names that are not lowercase letters, digits and underscores', async () => {
        for (const bad of ['Upper', 'with-dash', "x'; drop table y; --", '', '_leading', 'a b', 'a.b', 'ü']) {
          await expect(index.createIndex(bad, { dimensions: DIM })).rejects.toBeInstanceOf(SearchIndexError);
          await expect(index.keywordSearch(bad, 'x', { limit: 1 })).rejects.toMatchObject({ code: 'invalid_argument' });
        }
      });

      it('reports a missing index on reads and ignores it on deletes', async () => {
        const missing = `ct_${run}_missing`;
        await expect(index.keywordSearch(missing, 'x', { limit: 1 })).rejects.toMatchObject({ code: 'index_not_found' });
        await expect(index.vectorSearch(missing, axis(0), { limit: 1 })).rejects.toMatchObject({ code: 'index_not_found' });
        await expect(index.count(missing)).rejects.toMatchObject({ code: 'index_not_found' });
        await expect(index.upsert(missing, [chunk({ chunkId: 'a' })])).rejects.toMatchObject({ code: 'index_not_found' });
        await index.deleteItems(missing, ['x'], 1);
        await index.deleteWhere(missing, { collections: ['x'] });
        expect(await index.indexExists(missing)).toBe(false);
      });
    });

    describe('keyword search', () => {
      it('finds a chunk right after its upsert, with stemming and without stop words', async () => {
        const name = await freshIndex();
        const doc = chunk({ chunkId: 'k1', text: 'The runner runs through the park every morning' });
        await index.upsert(name, [doc, chunk({ chunkId: 'k2', text: 'Quiet library with old books' })]);

        const running = await index.keywordSearch(name, 'running', { limit: 10 });
        expect(ids(running)).toEqual(['k1']);
        expect(running[0].itemId).toBe('item_k1');
        expect(running[0].score).toBeGreaterThan(0);
        expect(running[0].doc).toEqual(withoutVector(doc));
        expect(running[0].doc).not.toHaveProperty('vector');

        expect(ids(await index.keywordSearch(name, 'the of and running', { limit: 10 }))).toEqual(['k1']);
        expect(ids(await index.keywordSearch(name, 'the of and running', { limit: 10, operator: 'and' }))).toEqual(['k1']);
        expect(await index.keywordSearch(name, 'the and of', { limit: 10 })).toEqual([]);
        expect(await index.keywordSearch(name, '   ', { limit: 10 })).toEqual([]);
        expect(await index.keywordSearch(name, 'nothing-like-this', { limit: 10 })).toEqual([]);
      });

      it('searches the title together with the text', async () => {
        const name = await freshIndex();
        await index.upsert(name, [chunk({ chunkId: 't1', title: 'Quarterly report', text: 'revenue grew' })]);
        expect(ids(await index.keywordSearch(name, 'quarterly', { limit: 5 }))).toEqual(['t1']);
        expect(ids(await index.keywordSearch(name, 'quarterly revenue', { limit: 5, operator: 'and' }))).toEqual(['t1']);
      });

      it('treats query syntax characters as plain text', async () => {
        const name = await freshIndex();
        await index.upsert(name, [chunk({ chunkId: 's1', text: "O'Reilly wrote about foxes" })]);
        const hits = await index.keywordSearch(name, 'O\'Reilly AND (fox) OR "x" -y *:* \\', { limit: 5 });
        expect(ids(hits)).toEqual(['s1']);
      });

      it('distinguishes the or, and, phrase operators', async () => {
        const name = await freshIndex();
        await index.upsert(name, [
          chunk({ chunkId: 'o1', text: 'red apples and green pears' }),
          chunk({ chunkId: 'o2', text: 'green apples' }),
          chunk({ chunkId: 'o3', text: 'red cars' }),
        ]);
        const or = await index.keywordSearch(name, 'red apples', { limit: 10 });
        expect(sortedIds(or)).toEqual(['o1', 'o2', 'o3']);
        expect(or[0].chunkId).toBe('o1');
        expect(sortedIds(await index.keywordSearch(name, 'red apples', { limit: 10, operator: 'or' }))).toEqual(['o1', 'o2', 'o3']);
        expect(ids(await index.keywordSearch(name, 'red apples', { limit: 10, operator: 'and' }))).toEqual(['o1']);
        expect(sortedIds(await index.keywordSearch(name, 'green apples', { limit: 10, operator: 'and' }))).toEqual(['o1', 'o2']);
        expect(ids(await index.keywordSearch(name, 'red apples', { limit: 10, operator: 'phrase' }))).toEqual(['o1']);
        expect(ids(await index.keywordSearch(name, 'green apples', { limit: 10, operator: 'phrase' }))).toEqual(['o2']);
        expect(await index.keywordSearch(name, 'apples red', { limit: 10, operator: 'phrase' })).toEqual([]);

        // A phrase query sees a chunk written after the previous searches at once.
        await index.upsert(name, [chunk({ chunkId: 'o4', text: 'bright red apple' })]);
        expect(sortedIds(await index.keywordSearch(name, 'red apples', { limit: 10, operator: 'phrase' }))).toEqual(['o1', 'o4']);
        // ...and no longer sees a chunk whose text changed.
        await index.upsert(name, [chunk({ chunkId: 'o1', text: 'pears only', version: 2 })]);
        expect(ids(await index.keywordSearch(name, 'red apples', { limit: 10, operator: 'phrase' }))).toEqual(['o4']);
      });

      it('honours the limit and ranks the better match first', async () => {
        const name = await freshIndex();
        await index.upsert(name, [
          chunk({ chunkId: 'r1', text: 'kiwi' }),
          chunk({ chunkId: 'r2', text: 'kiwi kiwi kiwi banana' }),
          chunk({ chunkId: 'r3', text: 'banana bread and a long tail of unrelated words to dilute the match' }),
          chunk({ chunkId: 'r4', text: 'kiwi banana' }),
        ]);
        const top = await index.keywordSearch(name, 'kiwi banana', { limit: 2 });
        expect(top).toHaveLength(2);
        expect(top[0].score).toBeGreaterThanOrEqual(top[1].score);
        expect(ids(top)).not.toContain('r3');
      });

      it('ranks chunks written since the last optimize together with the older ones', async () => {
        const name = await freshIndex();
        await index.upsert(
          name,
          Array.from({ length: 50 }, (_, i) => chunk({ chunkId: `old_${String(i).padStart(2, '0')}`, text: `filler words number ${i} mango` })),
        );
        await index.optimize(name);
        await index.upsert(name, [
          chunk({ chunkId: 'new_best', text: 'mango papaya' }),
          chunk({ chunkId: 'new_other', text: 'papaya with a few more words' }),
        ]);
        const top = await index.keywordSearch(name, 'mango papaya', { limit: 3 });
        expect(top[0].chunkId).toBe('new_best');
        expect(top[1].chunkId).toBe('new_other');
        const scores = top.map((c) => c.score);
        expect(scores).toEqual([...scores].sort((a, b) => b - a));
        const all = await index.keywordSearch(name, 'mango', { limit: 100 });
        expect(all).toHaveLength(51);
      });
    });

    describe('vector search', () => {
      it('ranks the nearest first by cosine similarity', async () => {
        const name = await freshIndex();
        await index.upsert(name, [
          chunk({ chunkId: 'v0', vector: axis(0) }),
          chunk({ chunkId: 'v1', vector: axis(1) }),
          chunk({ chunkId: 'v2', vector: axis(2) }),
          chunk({ chunkId: 'near0', vector: [0.9, 0.1, 0, 0, 0, 0, 0, 0] }),
          chunk({ chunkId: 'mid', vector: [1, 1, 0, 0, 0, 0, 0, 0] }),
        ]);
        const hits = await index.vectorSearch(name, new Float32Array(axis(0).map((x) => x * 3)), { limit: 4 });
        expect(ids(hits)).toEqual(['v0', 'near0', 'mid', hits[3].chunkId]);
        expect(['v1', 'v2']).toContain(hits[3].chunkId);
        expect(hits[0].score).toBeCloseTo(1, 5);
        expect(hits[1].score).toBeCloseTo(0.9 / Math.hypot(0.9, 0.1), 4);
        expect(hits[2].score).toBeCloseTo(Math.SQRT1_2, 4);
        expect(hits[3].score).toBeCloseTo(0, 4);
        expect(hits[0].doc).not.toHaveProperty('vector');
        expect(hits[0].itemId).toBe('item_v0');
        expect(await index.vectorSearch(name, axis(1), { limit: 1 }).then(ids)).toEqual(['v1']);
      });

      it('rejects a query vector of the wrong dimension', async () => {
        const name = await freshIndex();
        await index.upsert(name, [chunk({ chunkId: 'd1' })]);
        await expect(index.vectorSearch(name, [1, 0, 0], { limit: 1 })).rejects.toThrow();
      });
    });

    describe('filters (keyword search, vector search, count and listChunks agree)', () => {
      const NOW = T0 + 5_000;
      const docs: ChunkDoc[] = [
        chunk({
          chunkId: 'f_pub',
          itemId: 'i1',
          collection: 'c1',
          principals: null,
          metadata: { lang: 'en', year: 2024 },
          additionalMetadata: { connector_id: 'gh' },
          vector: [1, 0.1, 0, 0, 0, 0, 0, 0],
        }),
        chunk({
          chunkId: 'f_acl_a',
          itemId: 'i2',
          collection: 'c1',
          principals: ['alice'],
          metadata: { lang: 'de', year: 2023 },
          additionalMetadata: { connector_id: 'gh', resource_id: 'r1' },
          isApp: true,
          sourceType: 'app',
          vector: [1, 0.2, 0, 0, 0, 0, 0, 0],
        }),
        chunk({
          chunkId: 'f_acl_pub',
          itemId: 'i3',
          store: 'memory',
          collection: 'c2',
          principals: [PUBLIC_PRINCIPAL],
          metadata: { lang: 'en', year: '2024' },
          expiresAt: NOW + 1000,
          sourceType: 'memory',
          vector: [1, 0.3, 0, 0, 0, 0, 0, 0],
        }),
        chunk({
          chunkId: 'f_acl_b',
          itemId: 'i4',
          store: 'memory',
          collection: 'c2',
          principals: ['bob', 'carol'],
          metadata: { lang: 'fr', flag: true },
          expiresAt: NOW - 1,
          sourceType: 'memory',
          vector: [1, 0.4, 0, 0, 0, 0, 0, 0],
        }),
        chunk({
          chunkId: 'f_nobody',
          itemId: 'i5',
          collection: "it's",
          principals: [],
          metadata: { lang: null },
          additionalMetadata: { 'resource.path': 'a/b' },
          expiresAt: NOW,
          vector: [1, 0.5, 0, 0, 0, 0, 0, 0],
        }),
      ].map((d) => ({ ...d, text: `zebra crossing near ${d.chunkId}` }));
      const all = docs.map((d) => d.chunkId).sort();

      const cases: [string, SearchFilter, string[]][] = [
        ['no filter', {}, all],
        ['stores memory', { stores: ['memory'] }, ['f_acl_b', 'f_acl_pub']],
        ['stores knowledge+memory', { stores: ['knowledge', 'memory'] }, all],
        ['stores empty', { stores: [] }, []],
        ['collections c1', { collections: ['c1'] }, ['f_acl_a', 'f_pub']],
        ['collection with a quote', { collections: ["it's"] }, ['f_nobody']],
        ['collections empty', { collections: [] }, []],
        ['itemIds', { itemIds: ['i1', 'i4', 'unknown'] }, ['f_acl_b', 'f_pub']],
        ['now excludes expiresAt <= now', { now: NOW }, ['f_acl_a', 'f_acl_pub', 'f_pub']],
        ['now in the past keeps all', { now: T0 }, all],
        ['includeApps false', { includeApps: false }, all.filter((id) => id !== 'f_acl_a')],
        ['includeApps true', { includeApps: true }, all],
        ['principalsAny null: no ACL filtering', { principalsAny: null }, all],
        ['principalsAny []: unrestricted and public only', { principalsAny: [] }, ['f_acl_pub', 'f_pub']],
        ['principalsAny overlap alice', { principalsAny: ['alice'] }, ['f_acl_a', 'f_acl_pub', 'f_pub']],
        ['principalsAny overlap carol', { principalsAny: ['dave', 'carol'] }, ['f_acl_b', 'f_acl_pub', 'f_pub']],
        ['principalsAny no overlap', { principalsAny: ['mallory'] }, ['f_acl_pub', 'f_pub']],
        ['metadata equality', { metadata: { lang: 'en' } }, ['f_acl_pub', 'f_pub']],
        ['metadata IN', { metadata: { lang: ['de', 'fr'] } }, ['f_acl_a', 'f_acl_b']],
        ['metadata number is not a string', { metadata: { year: 2024 } }, ['f_pub']],
        ['metadata string is not a number', { metadata: { year: '2024' } }, ['f_acl_pub']],
        ['metadata two keys (AND)', { metadata: { lang: 'en', year: 2024 } }, ['f_pub']],
        ['metadata boolean', { metadata: { flag: true } }, ['f_acl_b']],
        ['metadata null', { metadata: { lang: null } }, ['f_nobody']],
        ['metadata empty IN', { metadata: { lang: [] } }, []],
        ['metadata unknown key', { metadata: { missing: 'x' } }, []],
        ['additionalMetadata equality', { additionalMetadata: { connector_id: 'gh' } }, ['f_acl_a', 'f_pub']],
        ['additionalMetadata IN', { additionalMetadata: { resource_id: ['r1', 'r2'] } }, ['f_acl_a']],
        ['additionalMetadata dotted key', { additionalMetadata: { 'resource.path': 'a/b' } }, ['f_nobody']],
        ['metadata and additionalMetadata are separate', { additionalMetadata: { lang: 'en' } }, []],
        [
          'combined',
          { stores: ['knowledge'], principalsAny: ['alice'], now: NOW, includeApps: true, metadata: { lang: ['en', 'de'] } },
          ['f_acl_a', 'f_pub'],
        ],
      ];

      let name: string;
      beforeAll(async () => {
        name = await freshIndex();
        await index.upsert(name, docs);
      });

      it.each(cases)('%s', async (_label, filter, expected) => {
        expect(sortedIds(await index.keywordSearch(name, 'zebra', { limit: 50, filter }))).toEqual(expected);
        expect(sortedIds(await index.vectorSearch(name, axis(0), { limit: 50, filter }))).toEqual(expected);
        expect(await index.count(name, filter)).toBe(expected.length);
        expect(ids(await index.listChunks(name, { filter }))).toEqual(expected);
        expect(sortedIds(await index.listChunks(name, { filter, fields: 'lean' }))).toEqual(expected);
      });

      it('rejects metadata keys that are not identifiers', async () => {
        const filter: SearchFilter = { metadata: { "x') OR true OR ('": 1 } };
        await expect(index.keywordSearch(name, 'zebra', { limit: 5, filter })).rejects.toMatchObject({ code: 'invalid_argument' });
        await expect(index.vectorSearch(name, axis(0), { limit: 5, filter })).rejects.toMatchObject({ code: 'invalid_argument' });
      });

      it('treats quotes and SQL in values as data', async () => {
        const evil = "c1' OR '1'='1";
        expect(await index.count(name, { collections: [evil] })).toBe(0);
        expect(await index.count(name, { itemIds: [evil], metadata: { lang: evil } })).toBe(0);
        expect(await index.keywordSearch(name, 'zebra', { limit: 5, filter: { principalsAny: [evil] } }).then(sortedIds)).toEqual([
          'f_acl_pub',
          'f_pub',
        ]);
      });
    });

    it('prefilters: a restrictive filter still finds matches ranked far below the unfiltered top k', async () => {
      const name = await freshIndex();
      const crowd = Array.from({ length: 300 }, (_, i) =>
        chunk({
          chunkId: `crowd_${String(i).padStart(3, '0')}`,
          collection: 'big',
          text: 'needle needle needle',
          vector: [1, i / 1000, 0, 0, 0, 0, 0, 0],
        }),
      );
      const lone = chunk({
        chunkId: 'lone',
        collection: 'small',
        text: 'one needle hidden among many other words in a much longer haystack of text',
        vector: [0, 0, 1, 0, 0, 0, 0, 0.1],
      });
      await index.upsert(name, [...crowd, lone]);
      const filter = { collections: ['small'] };
      expect(ids(await index.keywordSearch(name, 'needle', { limit: 5, filter }))).toEqual(['lone']);
      expect(ids(await index.vectorSearch(name, axis(0), { limit: 5, filter }))).toEqual(['lone']);
      await index.optimize(name);
      expect(ids(await index.keywordSearch(name, 'needle', { limit: 5, filter }))).toEqual(['lone']);
      expect(ids(await index.vectorSearch(name, axis(0), { limit: 5, filter }))).toEqual(['lone']);
    });

    it('rejects chunk and item ids containing U+001F and writes nothing of that batch', async () => {
      const name = await freshIndex();
      for (const bad of [{ chunkId: 'a\u001fb' }, { chunkId: 'ok', itemId: 'x\u001f' }]) {
        await expect(index.upsert(name, [chunk({ chunkId: 'fine', text: 'separator test' }), chunk({ text: 'separator test', ...bad })])).rejects.toMatchObject({ code: 'invalid_argument' });
      }
      expect(await index.count(name)).toBe(0);
    });

    it('lean searches return the same hits, order and scores as the full ones, with the lean fields of each doc', async () => {
      const name = await freshIndex();
      const random = seededRandom(11);
      const words = ['amber', 'basalt', 'cedar', 'dune', 'ember', 'fjord'];
      const docs = Array.from({ length: 60 }, (_, i) =>
        chunk({
          chunkId: `lean_${String(i).padStart(2, '0')}`,
          itemId: i % 4 ? `item_${i % 20}` : `item ü😀 "${i % 20}"`,
          collection: i % 3 ? 'a' : 'b',
          title: i % 4 ? null : `title ${words[i % 6]}`,
          // The text may hold anything, the id separator of the embedded engine's packed column included.
          text: Array.from({ length: 8 }, () => words[Math.floor(random() * words.length)]).join(' ') + (i % 6 === 0 ? ' \u001f😀\u0001 ü\n' : ''),
          vector: Array.from({ length: DIM }, () => random() * 2 - 1),
          principals: i % 5 === 0 ? null : [`user${i % 3}`],
          metadata: { team: i % 2 ? 'x' : 'y' },
          version: i % 9 === 0 ? 2 ** 40 + i : 1 + (i % 7),
        }),
      );
      await index.upsert(name, docs.slice(0, 40));
      await index.optimize(name);
      await index.upsert(name, docs.slice(40)); // some rows not yet folded into the engine indexes
      const lean = (c: { chunkId: string; itemId: string; score: number; doc: ChunkDoc | Omit<ChunkDoc, 'vector'> }) => ({
        chunkId: c.chunkId,
        itemId: c.itemId,
        score: c.score,
        doc: { chunkId: c.doc.chunkId, itemId: c.doc.itemId, text: c.doc.text, version: c.doc.version },
      });
      // Equal scores may come back in either order (the port does not order ties): compare by (score, id), and
      // within a limit compare the scores, which ties cannot change.
      const byScore = <T extends { chunkId: string; score: number }>(xs: T[]) => [...xs].sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1));
      const scores = (xs: { score: number }[]) => xs.map((x) => x.score);
      const descending = (xs: { score: number }[]) => xs.every((x, i) => i === 0 || xs[i - 1].score >= x.score);
      const filters: (SearchFilter | undefined)[] = [undefined, { collections: ['a'], principalsAny: ['user1'], metadata: { team: 'x' } }];
      for (const filter of filters) {
        for (const operator of ['or', 'and', 'phrase'] as const) {
          const query = operator === 'phrase' ? 'cedar dune' : 'amber cedar ember';
          const full = await index.keywordSearch(name, query, { limit: 60, filter, operator });
          const leanHits = await index.keywordSearch(name, query, { limit: 60, filter, operator, fields: 'lean' });
          expect(full.length).toBeGreaterThan(0);
          expect(descending(leanHits)).toBe(true);
          expect(byScore(leanHits)).toEqual(byScore(full).map(lean));
          expect(scores(await index.keywordSearch(name, query, { limit: 5, filter, operator, fields: 'lean' }))).toEqual(scores(full.slice(0, 5)));
        }
        const q = docs[7].vector;
        const full = await index.vectorSearch(name, q, { limit: 60, filter });
        const leanHits = await index.vectorSearch(name, q, { limit: 60, filter, fields: 'lean' });
        expect(full.length).toBeGreaterThan(5);
        expect(descending(leanHits)).toBe(true);
        expect(byScore(leanHits)).toEqual(byScore(full).map(lean));
        expect(scores(await index.vectorSearch(name, q, { limit: 5, filter, fields: 'lean' }))).toEqual(scores(full.slice(0, 5)));
      }
      for (const c of await index.vectorSearch(name, docs[3].vector, { limit: 60, fields: 'lean' })) {
        expect(c.doc).toEqual(lean({ ...c, doc: docs.find((d) => d.chunkId === c.chunkId)! }).doc);
      }
      expect(await index.keywordSearch(name, '   ', { limit: 5, fields: 'lean' })).toEqual([]);
      expect(await index.vectorSearch(name, axis(0), { limit: 0, fields: 'lean' })).toEqual([]);
    });

    describe('versions', () => {
      it('never lets an older upsert overwrite a newer chunk; an equal version replaces', async () => {
        const name = await freshIndex();
        await index.upsert(name, [chunk({ chunkId: 'x', text: 'newer text', version: 5 })]);
        await index.upsert(name, [chunk({ chunkId: 'x', text: 'older text', version: 3 })]);
        let [stored] = await index.getChunks(name, ['x']);
        expect(stored).toMatchObject({ text: 'newer text', version: 5 });
        expect(await index.keywordSearch(name, 'older', { limit: 5 })).toEqual([]);

        await index.upsert(name, [chunk({ chunkId: 'x', text: 'redelivered text', version: 5 })]);
        [stored] = await index.getChunks(name, ['x']);
        expect(stored).toMatchObject({ text: 'redelivered text', version: 5 });

        // Several versions of one chunk in a single batch: the newest wins, whatever the order.
        await index.upsert(name, [
          chunk({ chunkId: 'x', text: 'seven', version: 7 }),
          chunk({ chunkId: 'x', text: 'six', version: 6 }),
        ]);
        [stored] = await index.getChunks(name, ['x']);
        expect(stored).toMatchObject({ text: 'seven', version: 7 });
        expect(await index.count(name)).toBe(1);
      });

      it('deleteItems with an older version keeps the newer chunks', async () => {
        const name = await freshIndex();
        await index.upsert(name, [
          chunk({ chunkId: 'a', itemId: 'doc', version: 10 }),
          chunk({ chunkId: 'b', itemId: 'doc', version: 4 }),
          chunk({ chunkId: 'c', itemId: 'other', version: 1 }),
        ]);
        await index.deleteItems(name, ['doc'], 5);
        expect(ids(await index.listChunks(name))).toEqual(['a', 'c']);
        await index.deleteItems(name, ['doc'], 10);
        expect(ids(await index.listChunks(name))).toEqual(['c']);
        await index.deleteItems(name, [], 99);
        expect(await index.count(name)).toBe(1);
      });

      it('deleteItemVersions removes the chunks of each item at or below its own version', async () => {
        const name = await freshIndex();
        await index.upsert(name, [
          chunk({ chunkId: 'a1', itemId: 'a', version: 3 }),
          chunk({ chunkId: 'a2', itemId: 'a', version: 8 }),
          chunk({ chunkId: 'b1', itemId: 'b', version: 5 }),
          chunk({ chunkId: 'b2', itemId: "b'quote", version: 5 }),
          chunk({ chunkId: 'c1', itemId: 'c', version: 1 }),
        ]);
        await index.deleteItemVersions(name, [
          { itemId: 'a', version: 7 },
          { itemId: 'b', version: 4 },
          { itemId: "b'quote", version: 5 },
        ]);
        expect(ids(await index.listChunks(name)).sort()).toEqual(['a2', 'b1', 'c1']);
        await index.deleteItemVersions(name, []);
        await index.deleteItemVersions(await freshIndex(), [{ itemId: 'a', version: 1 }]);
        expect(await index.count(name)).toBe(3);
      });

      it('concurrent upserts of one chunk keep the highest version', async () => {
        const name = await freshIndex();
        const versions = [3, 9, 1, 7, 5, 8, 2];
        await Promise.all(versions.map((v) => index.upsert(name, [chunk({ chunkId: 'race', text: `v${v}`, version: v })])));
        const [stored] = await index.getChunks(name, ['race']);
        expect(stored).toMatchObject({ version: 9, text: 'v9' });
        expect(await index.count(name)).toBe(1);
      });
    });

    describe('deletes', () => {
      it('deleteItems and deleteWhere remove chunks from every read', async () => {
        const name = await freshIndex();
        await index.upsert(name, [
          chunk({ chunkId: 'd1', itemId: 'i1', collection: 'c1', text: 'walrus one' }),
          chunk({ chunkId: 'd2', itemId: 'i1', collection: 'c1', text: 'walrus two' }),
          chunk({ chunkId: 'd3', itemId: 'i2', collection: 'c1', text: 'walrus three' }),
          chunk({ chunkId: 'd4', itemId: 'i3', collection: 'c2', text: 'walrus four' }),
          chunk({ chunkId: 'd5', itemId: 'i4', collection: 'c2', text: 'walrus five' }),
          chunk({ chunkId: 'd6', itemId: 'i5', collection: 'c3', text: 'walrus six' }),
        ]);
        await index.deleteItems(name, ['i1'], 1);
        expect(sortedIds(await index.keywordSearch(name, 'walrus', { limit: 10 }))).toEqual(['d3', 'd4', 'd5', 'd6']);
        expect(sortedIds(await index.vectorSearch(name, axis(0), { limit: 10 }))).toEqual(['d3', 'd4', 'd5', 'd6']);

        await index.deleteWhere(name, { collections: ['c2'], itemIds: ['i4', 'i5'] }); // both must match: only d5
        expect(ids(await index.listChunks(name))).toEqual(['d3', 'd4', 'd6']);

        await index.deleteWhere(name, { collections: [] }); // matches nothing
        await index.deleteWhere(name, { itemIds: ['unknown'] });
        expect(await index.count(name)).toBe(3);
        await expect(index.deleteWhere(name, {})).rejects.toMatchObject({ code: 'invalid_argument' });

        await index.deleteWhere(name, { collections: ['c1', 'c3'] });
        expect(ids(await index.listChunks(name))).toEqual(['d4']);
        expect(await index.getChunks(name, ['d3', 'd6'])).toEqual([]);
        expect(ids(await index.keywordSearch(name, 'walrus', { limit: 10 }))).toEqual(['d4']);
        expect(ids(await index.vectorSearch(name, axis(0), { limit: 10 }))).toEqual(['d4']);
      });
    });

    describe('getChunks and listChunks', () => {
      it('round-trips every field, with float32-identical vectors', async () => {
        const name = await freshIndex();
        const random = seededRandom(7);
        const vector = new Float32Array(DIM).map(() => (random() - 0.5) * 1e3);
        const full = chunk({
          chunkId: 'full',
          itemId: 'item-Ü',
          store: 'memory',
          collection: 'notes "2024"',
          title: "Title with 'quotes' and ünïcödé",
          text: 'Line one\nline two — with emoji 🦓 and a backslash \\ and 50% of _ wildcards',
          vector,
          principals: ['alice', PUBLIC_PRINCIPAL, 'group:eng'],
          metadata: { lang: 'en', year: 2024, score: 0.125, ok: true, none: null, 'a.b-c': 'dotted' },
          additionalMetadata: { connector_id: 'gh', resource_id: 'r/1', count: -3 },
          sourceType: 'memory',
          isApp: true,
          createdAt: T0 + 1,
          updatedAt: T0 + 2,
          expiresAt: T0 + 3_600_000,
          version: 2 ** 40 + 3,
        });
        const bare = chunk({
          chunkId: 'bare',
          title: null,
          text: 'bare',
          vector: [0.1, 0.2, 0.3, -0.4, 1e-7, 123.456, 0, -1],
          principals: [],
          sourceType: null,
          expiresAt: null,
        });
        const unrestricted = chunk({ chunkId: 'unrestricted', principals: null });
        await index.upsert(name, [full, bare, unrestricted]);

        const got = await index.getChunks(name, ['bare', 'missing', 'full', 'unrestricted', 'full']);
        expect(ids(got)).toEqual(['bare', 'full', 'unrestricted', 'full']);
        const [gotBare, gotFull, gotUnrestricted] = got;
        expect(withoutVector(gotFull)).toEqual(withoutVector(full));
        expect(gotFull.vector).toBeInstanceOf(Float32Array);
        expect(Array.from(gotFull.vector)).toEqual(Array.from(vector));
        expect(withoutVector(gotBare)).toEqual(withoutVector(bare));
        expect(Array.from(gotBare.vector)).toEqual(Array.from(Float32Array.from(bare.vector)));
        expect(gotUnrestricted.principals).toBeNull();
        expect(await index.getChunks(name, [])).toEqual([]);

        // The vectors alone: the same float32 values, in the order asked, unknown ids skipped.
        const vectors = await index.getVectors(name, ['bare', 'missing', 'full', 'full']);
        expect(vectors.map((v) => v.chunkId)).toEqual(['bare', 'full', 'full']);
        for (const v of vectors) expect(v.vector).toBeInstanceOf(Float32Array);
        expect(Array.from(vectors[0].vector)).toEqual(Array.from(gotBare.vector));
        expect(Array.from(vectors[1].vector)).toEqual(Array.from(vector));
        expect(await index.getVectors(name, [])).toEqual([]);

        const [listed] = await index.listChunks(name, { filter: { itemIds: ['item-Ü'] } });
        expect(withoutVector(listed)).toEqual(withoutVector(full));
        expect(Array.from(listed.vector)).toEqual(Array.from(vector));
        expect(await index.listChunks(name, { filter: { itemIds: ['item-Ü'] }, fields: 'lean' })).toEqual([{ chunkId: 'full', itemId: 'item-Ü', text: full.text, version: full.version }]);
        expect(await index.listChunks(name, { filter: { itemIds: [] }, fields: 'lean' })).toEqual([]);
      });

      it('lists in a stable chunkId order with offset and limit', async () => {
        const name = await freshIndex();
        const random = seededRandom(11);
        const all = Array.from({ length: 25 }, (_, i) => `l_${String(i).padStart(2, '0')}`);
        const shuffled = [...all].sort(() => random() - 0.5);
        for (let i = 0; i < shuffled.length; i += 7) {
          await index.upsert(
            name,
            shuffled.slice(i, i + 7).map((id, j) => chunk({ chunkId: id, collection: (i + j) % 2 ? 'odd' : 'even' })),
          );
        }
        expect(ids(await index.listChunks(name))).toEqual(all);
        const pages: string[] = [];
        for (let offset = 0; offset < 30; offset += 10) pages.push(...ids(await index.listChunks(name, { offset, limit: 10 })));
        expect(pages).toEqual(all);
        expect(ids(await index.listChunks(name, { offset: 20 }))).toEqual(all.slice(20));
        expect(await index.listChunks(name, { offset: 100, limit: 5 })).toEqual([]);
        expect(await index.listChunks(name, { limit: 0 })).toEqual([]);
        const even = ids(await index.listChunks(name, { filter: { collections: ['even'] } }));
        expect(even).toEqual([...even].sort());
        expect(ids(await index.listChunks(name, { filter: { collections: ['even'] }, offset: 3, limit: 4 }))).toEqual(even.slice(3, 7));
        expect((await index.listChunks(name, { limit: 1 }))[0].vector).toBeInstanceOf(Float32Array);
      });
    });

    describe('scale and maintenance', () => {
      const N = 1000;
      const DIMS = 16;
      let name: string;
      let docs: ChunkDoc[];
      const words = (i: number) => `w${i.toString(36)}q`; // a unique, unstemmable token per chunk

      beforeAll(async () => {
        name = await freshIndex(DIMS);
        const random = seededRandom(42);
        docs = Array.from({ length: N }, (_, i) =>
          chunk({
            chunkId: `s_${String(i).padStart(4, '0')}`,
            itemId: `item_${Math.floor(i / 4)}`,
            collection: `c${i % 10}`,
            text: `document ${words(i)} about topic${i % 7} and the quick brown fox`,
            vector: Array.from({ length: DIMS }, () => random() * 2 - 1),
            principals: i % 3 === 0 ? null : [`user${i % 5}`],
            metadata: { bucket: i % 4 },
            version: 1,
          }),
        );
        await index.upsert(name, docs);
      });

      async function expectAllCorrect(): Promise<void> {
        expect(await index.count(name)).toBe(N);
        expect(await index.count(name, { collections: ['c3'] })).toBe(N / 10);
        expect(await index.count(name, { metadata: { bucket: [1, 2] } })).toBe(N / 2);
        for (const i of [0, 377, 999]) {
          const keyword = await index.keywordSearch(name, `${words(i)} fox`, { limit: 3 });
          expect(keyword[0].chunkId).toBe(docs[i].chunkId);
          const vector = await index.vectorSearch(name, docs[i].vector, { limit: 3 });
          expect(vector[0].chunkId).toBe(docs[i].chunkId);
          expect(vector[0].score).toBeCloseTo(1, 4);
          const filtered = await index.vectorSearch(name, docs[i].vector, {
            limit: 3,
            filter: { collections: [docs[i].collection], principalsAny: ['user1'] },
          });
          const visible = docs[i].principals === null || docs[i].principals!.includes('user1');
          expect(filtered[0].chunkId === docs[i].chunkId).toBe(visible);
        }
        const phrase = await index.keywordSearch(name, 'quick brown fox', { limit: N, operator: 'phrase' });
        expect(phrase).toHaveLength(N);
        const [sample] = await index.getChunks(name, [docs[500].chunkId]);
        expect(Array.from(sample.vector)).toEqual(Array.from(Float32Array.from(docs[500].vector)));
      }

      it(`upserts ${N} chunks in one call and searches them correctly`, async () => {
        await expectAllCorrect();
      });

      it('optimize loses nothing, including after updates and deletes', async () => {
        const updated = docs.slice(0, 50).map((d) => ({ ...d, text: `${d.text} updated`, version: 2 }));
        await index.upsert(name, updated);
        await index.deleteItems(name, ['item_none'], 5);
        await index.optimize(name);
        await expectAllCorrect();
        expect(await index.keywordSearch(name, 'updated', { limit: N }).then((r) => r.length)).toBe(50);
        await index.optimize(name);
        await expectAllCorrect();
      });

      it('serves searches while upserts and deletes run concurrently', async () => {
        const extra = (batch: number) =>
          Array.from({ length: 20 }, (_, j) =>
            chunk({ chunkId: `z_${batch}_${j}`, itemId: `z_${batch}`, text: `concurrent batch ${batch}`, vector: axis(j % DIMS, DIMS), version: 3 }),
          );
        const work: Promise<unknown>[] = [];
        for (let b = 0; b < 10; b++) {
          work.push(index.upsert(name, extra(b)));
          work.push(index.keywordSearch(name, 'fox', { limit: 5 }));
          work.push(index.vectorSearch(name, axis(b % DIMS, DIMS), { limit: 5 }));
          work.push(index.count(name));
        }
        await Promise.all(work);
        expect(await index.count(name)).toBe(N + 200);
        await Promise.all([index.deleteItems(name, Array.from({ length: 10 }, (_, b) => `z_${b}`), 3), index.keywordSearch(name, 'concurrent', { limit: 5 })]);
        expect(await index.count(name)).toBe(N);
        expect(await index.keywordSearch(name, 'concurrent', { limit: 5 })).toEqual([]);
      });
    });
  });
}
