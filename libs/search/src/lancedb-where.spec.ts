import { isIndexedMetadataKey } from './metadata-filter-tokens';
import { lanceWhere, sqlIn, sqlInteger, sqlString } from './lancedb-where';

describe('LanceDB filter SQL', () => {
  it('quotes strings by doubling single quotes, and nothing else', () => {
    expect(sqlString("it's")).toBe("'it''s'");
    expect(sqlString("x' OR '1'='1")).toBe("'x'' OR ''1''=''1'");
    expect(sqlString('back\\slash')).toBe("'back\\slash'");
  });

  it('accepts only finite, safe integers (floored) as numbers', () => {
    expect(sqlInteger(1700000000000.9, 'now')).toBe('1700000000000');
    expect(() => sqlInteger(Number.NaN, 'now')).toThrow(/finite/);
    expect(() => sqlInteger(2 ** 60, 'now')).toThrow(/range/);
  });

  it('turns an empty list into false rather than an invalid IN ()', () => {
    expect(sqlIn('store', [])).toBe('false');
    expect(sqlIn('store', ['a', "b'c"])).toBe("store IN ('a', 'b''c')");
  });

  it('builds one conjunction for every filter', () => {
    expect(lanceWhere(undefined)).toBeUndefined();
    expect(lanceWhere({ includeApps: true, principalsAny: null })).toBeUndefined();
    expect(
      lanceWhere({
        stores: ['memory'],
        collections: ['c'],
        itemIds: [],
        now: 5,
        includeApps: false,
        principalsAny: ['alice'],
        metadata: { lang: ['en', 'de'], n: 1 },
        additionalMetadata: { connector_id: 'gh' },
      }),
    ).toBe(
      [
        "(store IN ('memory'))",
        "(collection IN ('c'))",
        '(false)',
        '(expires_key > 5)',
        '(is_app = false)',
        "(array_has_any(acl, ['__unrestricted__', '__public__', 'alice']))",
        `(array_has_any(filter_kv, ['m:lang="en"', 'm:lang="de"']))`,
        "(array_has_any(filter_kv, ['m:n=1']))",
        `(array_has_any(filter_kv, ['a:connector_id="gh"']))`,
      ].join(' AND '),
    );
  });

  it('rejects metadata keys that are not identifiers', () => {
    expect(() => lanceWhere({ metadata: { "a') OR true --": 1 } })).toThrow(/invalid metadata key/);
    expect(() => lanceWhere({ additionalMetadata: { '': 1 } })).toThrow(/invalid metadata key/);
  });

  it('the keys the service indexes (and its queries may filter on) are identifiers of up to 64 characters', () => {
    expect(['team', 'connector_id', '_x', 'k'.repeat(64)].every(isIndexedMetadataKey)).toBe(true);
    expect(['a.b', 'a-b', 'channel name', '1a', '', 'é', 'k'.repeat(65)].some(isIndexedMetadataKey)).toBe(false);
  });
});
