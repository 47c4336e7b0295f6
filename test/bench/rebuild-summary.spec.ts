import { rebuiltPosition, summariseRebuild } from '@crs/bench/speed/rebuild';

describe('speed bench: rebuild summary', () => {
  // What `crs projections rebuild all` prints: each projection's handled events (one ingest event feeds several).
  const output = [
    'databases: rebuilt from 6 events up to position 1200 in 10 ms (600 events/s)',
    'items: rebuilt from 900 events up to position 1200 in 100 ms (9000 events/s)',
    'webhook-outbox: rebuilt from 500 events up to position 1200 in 40 ms (12500 events/s)',
    'search-index: rebuilt 2 index(es) from 300 events up to position 1200 in 250 ms (1200 events/s)',
    'a line that is not a projection',
  ];

  it('rates the whole rebuild by the log events, each counted once, not by the projections handled events added up', () => {
    expect(rebuiltPosition(output)).toBe(1200);
    const r = summariseRebuild('crs projections rebuild all', 900, output, 0, 1000);
    expect(r.log).toEqual({ events: 1000, position: 1200 });
    expect(r.whole).toEqual({ logEvents: 1000, ms: 400, logEventsPerSecond: 2500 });
    expect(r.readModels).toEqual({ logEvents: 1000, ms: 150, logEventsPerSecond: 6667 });
  });

  it('reports each projection separately: its handled events/s and the log it covered per second', () => {
    const r = summariseRebuild('crs projections rebuild all', 900, output, 0, 1000);
    expect(r.projections.map((p) => [p.projection, p.events, p.ms, p.eventsPerSecond, p.logEventsPerSecond])).toEqual([
      ['databases', 6, 10, 600, 100000],
      ['items', 900, 100, 9000, 10000],
      ['webhook-outbox', 500, 40, 12500, 25000],
      ['search-index', 300, 250, 1200, 4000],
    ]);
    expect(r.projections.find((p) => p.projection === 'search-index')!.indexes).toBe(2);
  });
});
