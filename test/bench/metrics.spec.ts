import { distinctIds, latencySummary, ndcgAtK, percentile, recallAtK } from '@crs/bench/lib/stats';
import { parseRebuildOutput } from '@crs/bench/speed/rebuild';
import { locomoTurnText } from '@crs/bench/quality/datasets';
import { parseSize } from '@crs/bench/speed/main';

describe('benchmark metrics', () => {
  it('nDCG@k: binary gains, log2 discount, ideal from the judged documents', () => {
    const rel = new Map([['a', 1], ['b', 1]]);
    expect(ndcgAtK(['a', 'b', 'c'], rel, 10)).toBeCloseTo(1);
    expect(ndcgAtK(['c', 'a'], rel, 10)).toBeCloseTo(1 / Math.log2(3) / (1 + 1 / Math.log2(3)));
    expect(ndcgAtK(['c', 'd'], rel, 10)).toBe(0);
    expect(ndcgAtK(['c', 'a'], rel, 1)).toBe(0);
  });

  it('latency summary of a long run (a fast floor answers 300k requests in 10 s; a spread into Math.max overflowed)', () => {
    const ms = Array.from({ length: 300_000 }, (_, i) => (i % 1000) / 10);
    ms[123_456] = 250;
    expect(latencySummary(ms)).toMatchObject({ n: 300_000, p50: 50, max: 250 });
  });

  it('recall@k counts evidence as written and scores 1 without evidence', () => {
    expect(recallAtK(['D1:1', 'D1:2'], new Set(['D1:2', 'D8:6; D9:17']), 10)).toBe(0.5);
    expect(recallAtK(['D1:1', 'D1:2'], new Set(['D1:2']), 1)).toBe(0);
    expect(recallAtK([], new Set(), 5)).toBe(1);
  });

  it('ranks a document at its best chunk', () => {
    expect(distinctIds(['a', 'b', 'a', 'c', 'b'])).toEqual(['a', 'b', 'c']);
  });

  it('percentiles by nearest rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 95)).toBe(95);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
  });

  it('formats LoCoMo turns as the data README says', () => {
    expect(locomoTurnText({ speaker: 'Caroline', text: 'Hi!' })).toBe('Caroline said, "Hi!"');
    expect(locomoTurnText({ speaker: 'Mel', text: 'Look', blip_caption: 'a photo of a dog' })).toBe('Mel said, "Look" and shared a photo of a dog.');
  });

  it('parses the rebuild CLI output', () => {
    const lines = parseRebuildOutput([
      'items: rebuilt from 705 events up to position 2330 in 930 ms (758 events/s)',
      'noise',
      'search-index: rebuilt 2 index(es) from 141 events up to position 2330 in 5737 ms (25 events/s)',
    ]);
    expect(lines).toEqual([
      { projection: 'items', events: 705, position: 2330, ms: 930, eventsPerSecond: 758 },
      { projection: 'search-index', indexes: 2, events: 141, position: 2330, ms: 5737, eventsPerSecond: 25 },
    ]);
  });

  it('parses sizes', () => {
    expect(parseSize('10k')).toBe(10_000);
    expect(parseSize('1m')).toBe(1_000_000);
    expect(parseSize('200')).toBe(200);
  });
});
