import { retryAtFrom } from './retry-after';

describe('retryAtFrom', () => {
  const now = new Date('2031-01-01T00:00:00Z');
  it('reads seconds, as a string or a number, fractions rounded up to the millisecond', () => {
    expect(retryAtFrom('30', now).toISOString()).toBe('2031-01-01T00:00:30.000Z');
    expect(retryAtFrom(2, now).toISOString()).toBe('2031-01-01T00:00:02.000Z');
    expect(retryAtFrom(' 1.5 ', now).toISOString()).toBe('2031-01-01T00:00:01.500Z');
  });
  it('reads an HTTP date; one already past is now', () => {
    expect(retryAtFrom('Wed, 01 Jan 2031 00:05:00 GMT', now).toISOString()).toBe('2031-01-01T00:05:00.000Z');
    expect(retryAtFrom('Tue, 31 Dec 2030 23:00:00 GMT', now).toISOString()).toBe('2031-01-01T00:00:00.000Z');
  });
  it('anything else, or nothing, waits the fallback', () => {
    expect(retryAtFrom(undefined, now).toISOString()).toBe('2031-01-01T00:01:00.000Z');
    expect(retryAtFrom('soon', now, 5000).toISOString()).toBe('2031-01-01T00:00:05.000Z');
    expect(retryAtFrom('-3', now, 5000).toISOString()).toBe('2031-01-01T00:00:05.000Z');
  });
});
