import { type ResidentInput, type ResidentSource, ResidentTable, ResidentTables } from './lancedb-resident-table';
import type { ChunkDoc } from './search-index.port';

function input(i: number, text: string, version = 1): ResidentInput {
  const doc: ChunkDoc = {
    chunkId: `c${i}`, itemId: `i${i}`, store: 'memory', collection: 'default', title: null, text, vector: [1, i], principals: null,
    metadata: {}, additionalMetadata: {}, sourceType: 'memory', isApp: false, createdAt: 1, updatedAt: 1, expiresAt: null, version,
  };
  return { doc, tokens: text.split(' ') };
}

/** A table in memory standing in for the engine, counting what it is asked. */
class FakeSource implements ResidentSource {
  rows = new Map<string, ResidentInput>();
  tableVersion = 1;
  calls = { version: 0, countRows: 0, heldVersions: 0, fetch: 0, fetched: 0 };

  put(...inputs: ResidentInput[]): void {
    for (const i of inputs) this.rows.set(i.doc.chunkId, i);
    this.tableVersion++;
  }
  async version() {
    this.calls.version++;
    return this.tableVersion;
  }
  async countRows() {
    this.calls.countRows++;
    return this.rows.size;
  }
  async heldVersions() {
    this.calls.heldVersions++;
    return new Map([...this.rows].map(([id, i]) => [id, i.doc.version]));
  }
  async fetch(ids: string[] | undefined) {
    this.calls.fetch++;
    const out = ids === undefined ? [...this.rows.values()] : ids.flatMap((id) => this.rows.get(id) ?? []);
    this.calls.fetched += out.length;
    return out;
  }
}

describe('ResidentTable', () => {
  it('scores BM25 with every query occurrence counted, and `and` keeps only rows holding every term', () => {
    const table = new ResidentTable();
    table.put(input(1, 'red apple'));
    table.put(input(2, 'red red pear plum'));
    table.put(input(3, 'green apple pie'));
    const or = table.keyword(['apple'], 'or', 10, undefined);
    expect(or.map((h) => h.chunkId)).toEqual(['c1', 'c3']); // the shorter row first
    const twice = table.keyword(['apple', 'apple'], 'or', 10, undefined);
    expect(twice[0].score).toBeCloseTo(2 * or[0].score, 10);
    expect(table.keyword(['red', 'apple'], 'and', 10, undefined).map((h) => h.chunkId)).toEqual(['c1']);
    expect(table.keyword(['red', 'kiwi'], 'and', 10, undefined)).toEqual([]);
    table.remove('c1');
    expect(table.keyword(['apple'], 'or', 10, undefined).map((h) => h.chunkId)).toEqual(['c3']);
    expect(table.size).toBe(2);
  });
});

describe('ResidentTables', () => {
  it('fetches a table once, then only the rows a commit added or changed, and counts the bytes it holds', async () => {
    const source = new FakeSource();
    source.put(input(1, 'a b'), input(2, 'c d'));
    const tables = new ResidentTables(100, 10 ** 9);
    const first = await tables.get('t', source);
    expect(first?.size).toBe(2);
    expect(source.calls.fetched).toBe(2);
    await tables.get('t', source);
    expect(source.calls.fetch).toBe(1); // same version: nothing read but the version
    source.put(input(2, 'c d e f g h', 2), input(3, 'x'));
    const second = await tables.get('t', source);
    expect(second).toBe(first); // updated in place
    expect(source.calls.fetched).toBe(4); // the changed row and the new one
    expect(tables.usage()).toEqual({ bytes: second!.bytes, entries: 1 });
    tables.forget('t');
    expect(tables.usage()).toEqual({ bytes: 0, entries: 0 });
  });

  it('lets concurrent searches of one version share one sync', async () => {
    const source = new FakeSource();
    source.put(input(1, 'a'));
    const tables = new ResidentTables(100, 10 ** 9);
    const copies = await Promise.all([tables.get('t', source), tables.get('t', source), tables.get('t', source)]);
    expect(new Set(copies).size).toBe(1);
    expect(source.calls.fetch).toBe(1);
  });

  it('leaves a table past maxRows to the engine, without asking its version again for a while', async () => {
    const source = new FakeSource();
    source.put(...Array.from({ length: 5 }, (_, i) => input(i, 'w')));
    const tables = new ResidentTables(4, 10 ** 9);
    expect(await tables.get('t', source)).toBeUndefined();
    expect(await tables.get('t', source)).toBeUndefined();
    expect(source.calls).toMatchObject({ version: 1, countRows: 1, fetch: 0 });
  });

  it('does not fetch again a table whose copy outgrew maxBytes until it holds fewer rows', async () => {
    const source = new FakeSource();
    source.put(...Array.from({ length: 3 }, (_, i) => input(i, 'some words here')));
    const tables = new ResidentTables(100, 1000);
    const now = jest.spyOn(Date, 'now');
    try {
      now.mockReturnValue(1_000_000);
      expect(await tables.get('t', source)).toBeUndefined();
      expect(source.calls.fetch).toBe(1);
      now.mockReturnValue(1_010_000); // past the recheck: the version and row count are read again, nothing fetched
      source.put(input(9, 'more'));
      expect(await tables.get('t', source)).toBeUndefined();
      expect(source.calls).toMatchObject({ countRows: 2, fetch: 1 });
      expect(tables.usage()).toEqual({ bytes: 0, entries: 0 });
    } finally {
      now.mockRestore();
    }
  });
});
