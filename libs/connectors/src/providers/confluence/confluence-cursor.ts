import type { SyncCursor } from '../../provider.port';

/**
 * Where a space's sync stands:
 * - `since`: the latest last-modified time (ISO 8601) among the pages crawled so far; the next crawl asks for pages
 *   modified at or after it, less the overlap. Null: nothing crawled yet, the next crawl reads every page.
 * - `restricted`: for each page whose readers a restriction narrows, a digest of the per-document permission the
 *   provider last gave it. The restriction sweep of the next sync compares against it: a restriction change moves
 *   neither the page's version nor its last-modified time, so this is how the change is found.
 */
export interface ConfluencePosition {
  since: string | null;
  restricted: Record<string, string>;
}

interface EncodedCursor extends ConfluencePosition {
  v: 1;
  /** the space the positions are in: a cursor of another space means nothing here */
  space: string;
}

export const START: ConfluencePosition = { since: null, restricted: {} };

export function encodeCursor(space: string, p: ConfluencePosition): SyncCursor {
  const c: EncodedCursor = { v: 1, space, since: p.since, restricted: p.restricted };
  return JSON.stringify(c);
}

/** The position a saved cursor stands for; one that cannot be read, or of another space, starts from the beginning. */
export function decodeCursor(space: string, cursor: SyncCursor | null): ConfluencePosition {
  if (cursor === null) return START;
  try {
    const c = JSON.parse(cursor) as Partial<EncodedCursor>;
    if (c.v !== 1 || c.space !== space) return START;
    const since = typeof c.since === 'string' && Number.isFinite(Date.parse(c.since)) ? c.since : null;
    const restricted = c.restricted && typeof c.restricted === 'object' ? Object.fromEntries(Object.entries(c.restricted).filter(([, v]) => typeof v === 'string')) : {};
    return { since, restricted };
  } catch {
    return START;
  }
}

/**
 * The zone a bound is written in when the account's time zone is unknown or not one Intl knows: the westernmost
 * offset (UTC-12), so its wall-clock time read in any zone of the account is at or before the instant meant.
 */
export const FALLBACK_TIME_ZONE = 'Etc/GMT+12';

/**
 * The CQL bound for pages modified since `since`, less `overlapMs`: `yyyy-MM-dd HH:mm`, the wall-clock minute in
 * `timeZone`, the zone of the connector's account, in which Confluence reads CQL dates (`GET /user/current`
 * `timeZone`). Rounded down to the minute, as CQL compares minutes. A wall-clock time a fall-back repeats (in
 * Europe/Berlin 02:00 to 02:59 on the last Sunday of October) names two instants and Confluence may read the later; when
 * that later one is after the bound, the bound steps back until every instant its text names is at or before it, so
 * a change is never skipped, only read again.
 */
export function cqlSince(since: string, overlapMs: number, timeZone: string | undefined): string {
  const zone = knownZone(timeZone);
  const bound = Date.parse(since) - overlapMs;
  for (let at = bound; ; ) {
    const text = wallMinute(at, zone);
    const latest = latestInstantOf(text, zone) ?? at;
    if (latest <= bound) return text;
    at -= Math.max(latest - bound, 60_000);
  }
}

function knownZone(timeZone: string | undefined): string {
  if (!timeZone) return FALLBACK_TIME_ZONE;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone }).format(0);
    return timeZone;
  } catch {
    return FALLBACK_TIME_ZONE;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** `yyyy-MM-dd HH:mm` of an instant on the wall clock of `zone`. */
function wallMinute(at: number, zone: string): string {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' });
    formats.set(zone, format);
  }
  const part = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, p.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}`;
}

/** The zone's offset from UTC at an instant, in milliseconds, to the minute. */
function offsetAt(at: number, zone: string): number {
  const wall = Date.parse(`${wallMinute(at, zone).replace(' ', 'T')}:00Z`);
  return wall - Math.floor(at / 60_000) * 60_000;
}

/**
 * The latest instant a wall-clock minute names in `zone`: each offset in force within a day of it gives a candidate,
 * which counts when the zone shows that minute at it. Undefined for a minute a spring-forward skips.
 */
function latestInstantOf(text: string, zone: string): number | undefined {
  const wall = Date.parse(`${text.replace(' ', 'T')}:00Z`);
  const day = 86_400_000;
  const offsets = new Set([offsetAt(wall - day, zone), offsetAt(wall, zone), offsetAt(wall + day, zone)]);
  const named = [...offsets].map((o) => wall - o).filter((t) => wallMinute(t, zone) === text);
  return named.length === 0 ? undefined : Math.max(...named);
}
