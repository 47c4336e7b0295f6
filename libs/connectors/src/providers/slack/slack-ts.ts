/**
 * Slack message timestamps (`ts`): `<seconds>.<6 digits>` strings, unique within a channel, which are the messages'
 * ids. Sixteen significant digits are more than a double holds exactly, so they are compared as two integers.
 */
const TS = /^(\d+)\.(\d{6})$/;

export function isTs(value: unknown): value is string {
  return typeof value === 'string' && TS.test(value);
}

function parts(ts: string): [number, number] {
  const m = TS.exec(ts);
  if (!m) return [Number(ts.split('.')[0]) || 0, 0];
  return [Number(m[1]), Number(m[2])];
}

/** Negative, zero or positive as `a` is older than, the same as, or newer than `b`. */
export function compareTs(a: string, b: string): number {
  const [as, au] = parts(a);
  const [bs, bu] = parts(b);
  return as !== bs ? as - bs : au - bu;
}

export const newerTs = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : compareTs(a, b) >= 0 ? a : b);

/** `ts` moved back by whole seconds, never before the epoch. */
export function tsMinusSeconds(ts: string, seconds: number): string {
  const [s, u] = parts(ts);
  const back = Math.max(0, s - seconds);
  return `${back}.${String(back === 0 && s - seconds < 0 ? 0 : u).padStart(6, '0')}`;
}

/** The moment a ts stands for, as ISO 8601 (millisecond precision). */
export function tsToIso(ts: string): string {
  const [s, u] = parts(ts);
  return new Date(s * 1000 + Math.floor(u / 1000)).toISOString();
}
