import { advance, jqlLowerBound, jqlMinute, OVERLAP_MS } from './jira-cursor';

/** Every instant a wall-clock minute names in a zone: two where clocks are set back, one elsewhere. */
function instantsOf(wall: string, timeZone: string): number[] {
  const asUtc = Date.parse(`${wall.replace(' ', 'T')}:00Z`);
  const out: number[] = [];
  for (let offset = -14 * 60; offset <= 14 * 60; offset += 15) {
    const at = asUtc - offset * 60_000;
    if (jqlMinute(at, timeZone) === wall) out.push(at);
  }
  return out;
}

describe('jira crawl position', () => {
  it('the bound is five minutes below the position\'s minute, in the account\'s zone', () => {
    const minute = Date.parse('2026-06-10T10:00:00Z');
    expect(jqlLowerBound(minute, 'UTC')).toBe('2026-06-10 09:55');
    expect(jqlLowerBound(minute, 'Europe/Berlin')).toBe('2026-06-10 11:55');
    expect(jqlLowerBound(minute, 'America/New_York')).toBe('2026-06-10 05:55');
    expect(jqlLowerBound(minute, 'Not/A_Zone')).toBe('2026-06-10 09:55');
  });

  it('across the Berlin fall-back of 2026-10-25 no reading of the bound is later than five minutes below the position', () => {
    // 03:00 CEST (01:00Z) becomes 02:00 CET: the wall-clock hour 02:00-03:00 comes twice
    for (let minute = Date.parse('2026-10-24T21:00:00Z'); minute <= Date.parse('2026-10-25T05:00:00Z'); minute += 60_000) {
      const bound = jqlLowerBound(minute, 'Europe/Berlin');
      const latest = Math.max(...instantsOf(bound, 'Europe/Berlin'));
      if (latest > minute - OVERLAP_MS) throw new Error(`at ${new Date(minute).toISOString()} the bound "${bound}" may be read as ${new Date(latest).toISOString()}`);
    }
    // the position at 02:30 CEST, the first of the two 02:30s: the bound is three hours earlier than its overlap
    expect(jqlLowerBound(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe('2026-10-24 23:25');
    // well after the change, the bound is the overlap again
    expect(jqlLowerBound(Date.parse('2026-10-25T06:00:00Z'), 'Europe/Berlin')).toBe('2026-10-25 06:55');
  });

  it('across the Berlin spring-forward of 2026-03-29 no reading of the bound is later than five minutes below the position', () => {
    for (let minute = Date.parse('2026-03-28T21:00:00Z'); minute <= Date.parse('2026-03-29T05:00:00Z'); minute += 60_000) {
      const bound = jqlLowerBound(minute, 'Europe/Berlin');
      expect(Math.max(...instantsOf(bound, 'Europe/Berlin'))).toBeLessThanOrEqual(minute - OVERLAP_MS);
    }
  });

  it('remembers the issues taken within the overlap, so the next query skips them, and forgets older ones', () => {
    const at = (hhmmss: string) => Date.parse(`2026-06-10T${hhmmss}Z`);
    let position = advance(null, 'a', at('10:00:10'));
    position = advance(position, 'b', at('10:04:30'));
    position = advance(position, 'c', at('10:05:20'));
    expect(position).toEqual({ minute: at('10:05:00'), seen: [['a', at('10:00:10')], ['b', at('10:04:30')], ['c', at('10:05:20')]] });
    position = advance(position, 'd', at('10:06:00'));
    expect(position).toEqual({ minute: at('10:06:00'), seen: [['b', at('10:04:30')], ['c', at('10:05:20')], ['d', at('10:06:00')]] });
    // an issue found late in the overlap joins what was taken; the position stays
    position = advance(position, 'e', at('10:03:00'));
    expect(position).toEqual({ minute: at('10:06:00'), seen: [['e', at('10:03:00')], ['b', at('10:04:30')], ['c', at('10:05:20')], ['d', at('10:06:00')]] });
  });
});
