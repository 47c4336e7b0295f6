import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { chunksToArrow, toChunkDocs, unpackLean } from './lancedb-chunk-table';
import type { ChunkDoc } from './search-index.port';

const doc = (i: number, over: Partial<ChunkDoc> = {}): ChunkDoc => ({
  chunkId: `item-${i}:0`,
  itemId: `item-${i}`,
  store: 'memory',
  collection: 'default',
  title: null,
  text: `text ${i}`,
  vector: Float32Array.from([i, -i, 0.1 * i]),
  principals: null,
  metadata: {},
  additionalMetadata: {},
  sourceType: 'memory',
  isApp: false,
  createdAt: 1_700_000_000_000 + i,
  updatedAt: 1_700_000_000_500 + i,
  expiresAt: null,
  version: 40 + i,
  ...over,
});

describe('chunksToArrow', () => {
  // Every kind of value each column can hold: nulls among values, empty strings and lists, multi-byte text.
  const docs: ChunkDoc[] = [
    doc(0),
    doc(1, { title: 'Tïtle ✓ 日本語', text: 'émoji 🎉 and ü', principals: ['user_email:a@example.com', 'group:x'], sourceType: null }),
    doc(2, { text: '', principals: [], metadata: { team: 'a', n: 3, ok: true, none: null }, additionalMetadata: { user_id: 'u1' } }),
    doc(3, { store: 'knowledge', collection: 'c-1', isApp: true, expiresAt: 1_800_000_000_000, version: Number.MAX_SAFE_INTEGER }),
    ...Array.from({ length: 20 }, (_, i) => doc(10 + i, { title: i % 3 ? null : `t${i}`, expiresAt: i % 2 ? null : 1_900_000_000_000 + i, principals: i % 4 ? null : [`p${i}`] })),
  ];

  it('round-trips every field of every doc, through Arrow IPC as LanceDB receives it', () => {
    const table = tableFromIPC(tableToIPC(chunksToArrow(docs, 3)));
    expect(table.numRows).toBe(docs.length);
    const back = toChunkDocs(table);
    expect(back.map(({ vector, ...rest }) => ({ ...rest, vector: Array.from(vector as Float32Array) }))).toEqual(
      docs.map(({ vector, ...rest }) => ({ ...rest, vector: Array.from(vector as Float32Array) })),
    );
  });

  it('fills the derived columns: title and text for full-text search, the packed lean fields, the ACL list, the expiry key and the filter tokens', () => {
    const table = chunksToArrow(docs, 3);
    const row = (name: string, i: number) => table.getChild(name)!.get(i);
    expect(row('fts_text', 0)).toBe('text 0');
    expect(row('fts_text', 1)).toBe('Tïtle ✓ 日本語\némoji 🎉 and ü');
    expect(unpackLean(row('lean', 1))).toEqual({ chunkId: 'item-1:0', itemId: 'item-1', version: 41, text: 'émoji 🎉 and ü' });
    expect(Array.from(row('acl', 0))).toEqual(['__unrestricted__']);
    expect(Array.from(row('acl', 1))).toEqual(['user_email:a@example.com', 'group:x']);
    expect(Array.from(row('acl', 2))).toEqual([]);
    expect(row('principals', 0)).toBeNull();
    expect(Number(row('expires_key', 0))).toBe(Number.MAX_SAFE_INTEGER);
    expect(Number(row('expires_key', 3))).toBe(1_800_000_000_000);
    expect(row('expires_at', 0)).toBeNull();
    expect(Array.from(row('filter_kv', 2))).toEqual(['m:team="a"', 'm:n=3', 'm:ok=true', 'm:none=null', 'a:user_id="u1"']);
    expect(Array.from(row('filter_kv', 0))).toEqual([]);
  });

  it('refuses a vector of another length and a version that is not a safe integer', () => {
    expect(() => chunksToArrow([doc(0, { vector: [1, 2] })], 3)).toThrow(/2-dimensional vector/);
    expect(() => chunksToArrow([doc(0, { version: 1.5 })], 3)).toThrow(/version must be an integer/);
  });
});
