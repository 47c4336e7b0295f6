import { ItemRows } from './retrieval.service';
import type { ItemCheckRow } from '@crs/projections/items/items.queries';

const row = (key: string) => ({ item_key: key }) as ItemCheckRow;

describe('ItemRows (the read-model rows of one query)', () => {
  it('asks for each key once, and later lists wait for rows already on their way', async () => {
    const asked: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const rows = new ItemRows(async (keys) => {
      asked.push(keys);
      await gate;
      return new Map(keys.filter((k) => k !== 'gone').map((k) => [k, row(k)]));
    });
    const first = rows.load(['a', 'b', 'a']);
    let secondDone = false;
    const second = rows.load(['b', 'c', 'gone']).then(() => (secondDone = true));
    await Promise.resolve();
    expect(asked).toEqual([['a', 'b'], ['c', 'gone']]);
    expect(secondDone).toBe(false);
    release();
    await Promise.all([first, second]);
    await rows.load(['a', 'c']); // all known: no round trip
    expect(asked).toHaveLength(2);
    expect(rows.get('a')).toEqual(row('a'));
    expect(rows.get('c')).toEqual(row('c'));
    expect(rows.get('gone')).toBeUndefined();
  });

  it('a failed fetch fails every load that waits for it', async () => {
    const rows = new ItemRows(async () => {
      throw new Error('read model down');
    });
    await expect(rows.load(['a'])).rejects.toThrow('read model down');
    await expect(rows.load(['a', 'b'])).rejects.toThrow('read model down');
  });
});
