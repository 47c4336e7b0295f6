/**
 * When a throttled call may be made again, from a Retry-After value as HTTP gives it (RFC 9110 §10.2.3): a number of
 * seconds, or an HTTP date. A date already past means now; a value that is neither (or none) means `fallbackMs` from
 * now. Every provider reads its throttling headers through this, so a sync is deferred the same way whichever source
 * throttled it.
 */
export function retryAtFrom(value: string | number | null | undefined, now: Date, fallbackMs = 60_000): Date {
  const raw = typeof value === 'number' ? String(value) : (value ?? '').trim();
  if (/^\d+(\.\d+)?$/.test(raw)) return new Date(now.getTime() + Math.ceil(Number(raw) * 1000));
  const at = /[a-z]/i.test(raw) ? Date.parse(raw) : NaN;
  if (!Number.isNaN(at)) return new Date(Math.max(at, now.getTime()));
  return new Date(now.getTime() + fallbackMs);
}
