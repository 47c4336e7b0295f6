import type { SyncCursor } from '../../provider.port';

/**
 * Where the updated-time crawl of one project stands. Jira's JQL compares `updated` to the minute, so the next query
 * starts at the minute of the last issue taken (`updated >= "yyyy-MM-dd HH:mm"`) and skips the issues of that minute
 * it already took, by id and exact update time: an issue edited again in the same minute comes back with another time
 * and is taken again.
 */
export interface CrawlPosition {
  /** the start of the minute (UTC epoch ms) of the last issue taken */
  minute: number;
  /** `[issue id, updated epoch ms]` of every issue taken whose update time falls in that minute */
  seen: [string, number][];
}

export interface JiraSyncState {
  /** null: from the first issue (a first sync, or a full re-read) */
  position: CrawlPosition | null;
  /** when the full re-read under way started (epoch ms); null when none is */
  sweepStartedAt: number | null;
  /** when the last complete full re-read started (epoch ms); null before the first one completed */
  sweptAt: number | null;
  /** for each security level an issue taken had: a digest of who may see its issues, to find membership changes */
  levels: Record<string, string>;
}

interface EncodedCursor extends JiraSyncState {
  v: 1;
  /** the project the positions are in: a cursor of another project means nothing here */
  project: string;
}

export const startState = (): JiraSyncState => ({ position: null, sweepStartedAt: null, sweptAt: null, levels: {} });

export function encodeCursor(project: string, state: JiraSyncState): SyncCursor {
  const c: EncodedCursor = { v: 1, project, ...state };
  return JSON.stringify(c);
}

/**
 * The state a saved cursor stands for. One that cannot be read, or was written for another project, starts from the
 * first issue: every issue is read again and the caller skips the unchanged ones by content hash.
 */
export function decodeCursor(project: string, cursor: SyncCursor | null): JiraSyncState {
  if (cursor === null) return startState();
  try {
    const c = JSON.parse(cursor) as Partial<EncodedCursor>;
    if (c.v !== 1 || c.project !== project) return startState();
    const position = c.position && Number.isFinite(c.position.minute) && Array.isArray(c.position.seen) ? { minute: c.position.minute, seen: c.position.seen.filter((s) => Array.isArray(s) && typeof s[0] === 'string' && typeof s[1] === 'number') } : null;
    const time = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
    const levels = c.levels && typeof c.levels === 'object' ? Object.fromEntries(Object.entries(c.levels).filter(([, h]) => typeof h === 'string')) : {};
    return { position, sweepStartedAt: time(c.sweepStartedAt), sweptAt: time(c.sweptAt), levels };
  } catch {
    return startState();
  }
}

/** The position after taking an issue updated at `updated` (epoch ms): a later minute starts a new seen list. */
export function advance(position: CrawlPosition | null, id: string, updated: number): CrawlPosition {
  const minute = Math.floor(updated / 60_000) * 60_000;
  if (position === null || minute > position.minute) return { minute, seen: [[id, updated]] };
  if (minute < position.minute) return position;
  return { minute, seen: [...position.seen.filter(([seenId]) => seenId !== id), [id, updated]] };
}

/** `yyyy-MM-dd HH:mm` of an instant in a time zone: how JQL writes a date, read in the searching user's zone. */
export function jqlMinute(instant: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' }).formatToParts(new Date(instant));
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}

/** The zone's offset from UTC at an instant, in minutes. */
function offsetMinutes(instant: number, timeZone: string): number {
  const local = Date.parse(`${jqlMinute(instant, timeZone).replace(' ', 'T')}:00Z`);
  return Math.round((local - Math.floor(instant / 60_000) * 60_000) / 60_000);
}

/**
 * The JQL lower bound for a crawl position, in the account's time zone. Within the hour after a change of offset
 * (clocks set back) a wall-clock minute names two instants and Jira may read the later one, so the bound is moved an
 * hour earlier there: a few issues read twice (and skipped as unchanged) rather than an hour of edits missed.
 */
export function jqlLowerBound(minute: number, timeZone: string): string {
  let zone = timeZone;
  try {
    jqlMinute(minute, zone);
  } catch {
    zone = 'UTC';
  }
  const hourBefore = minute - 3_600_000;
  return jqlMinute(offsetMinutes(minute, zone) === offsetMinutes(hourBefore, zone) ? minute : hourBefore, zone);
}
