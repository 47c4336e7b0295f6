/**
 * `expiry_time` is any positive integer number of seconds (the spec bounds it only by its type). An expiry past the
 * last instant Postgres, JavaScript dates and RFC 3339 all hold (9999-12-31T23:59:59.999Z) is stored as that instant:
 * the item then expires in the year 10000, which no reader can tell from "later still". Without the bound such an
 * expiry was written as "+010002-…" and the items projection could not store it, which stopped it for everyone.
 */
export const LATEST_EXPIRY = '9999-12-31T23:59:59.999Z';
const LATEST_EXPIRY_MS = Date.parse(LATEST_EXPIRY);

/** The absolute expiry (RFC 3339) of an item ingested at `now` that lives `seconds`. */
export function expiryAfter(now: Date, seconds: number): string {
  const ms = now.getTime() + seconds * 1000;
  return Number.isFinite(ms) && ms < LATEST_EXPIRY_MS ? new Date(ms).toISOString() : LATEST_EXPIRY;
}

/**
 * An event's expiry as the read models store it: unchanged, or LATEST_EXPIRY for one written before the bound
 * (an expanded year such as "+010002-12-16T05:11:51.420Z"), so a log holding one replays.
 */
export function storableExpiry(expiresAt: string | null | undefined): string | null {
  if (expiresAt === null || expiresAt === undefined) return null;
  const ms = Date.parse(expiresAt);
  return Number.isFinite(ms) && ms <= LATEST_EXPIRY_MS && !expiresAt.startsWith('+') ? expiresAt : LATEST_EXPIRY;
}
