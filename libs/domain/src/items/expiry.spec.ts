import { expiryAfter, LATEST_EXPIRY, storableExpiry } from './expiry';

describe('item expiry', () => {
  const now = new Date('2026-11-25T00:00:00.000Z');

  it('adds the seconds to the ingest time', () => {
    expect(expiryAfter(now, 6)).toBe('2026-11-25T00:00:06.000Z');
    expect(expiryAfter(now, 251_000_000_000)).toMatch(/^99\d\d-/); // still inside year 9999
  });

  it('stores an expiry past year 9999 (or past any date at all) as the last storable instant', () => {
    expect(expiryAfter(now, 251_700_000_000)).toBe(LATEST_EXPIRY);
    expect(expiryAfter(now, 8.64e12)).toBe(LATEST_EXPIRY); // new Date() of that would throw
    expect(expiryAfter(now, Number.MAX_SAFE_INTEGER)).toBe(LATEST_EXPIRY);
    expect(expiryAfter(now, 1e300)).toBe(LATEST_EXPIRY);
  });

  it('reads an event written before the bound as the last storable instant, and leaves others as they are', () => {
    expect(storableExpiry('+010002-12-16T05:11:51.420Z')).toBe(LATEST_EXPIRY);
    expect(storableExpiry('2026-11-25T00:00:06.000Z')).toBe('2026-11-25T00:00:06.000Z');
    expect(storableExpiry(LATEST_EXPIRY)).toBe(LATEST_EXPIRY);
    expect(storableExpiry(null)).toBeNull();
    expect(storableExpiry(undefined)).toBeNull();
  });
});
