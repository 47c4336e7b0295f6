import type { SyncCursor } from '../../provider.port';

/**
 * How far below the last issue taken each query starts again. Jira's search index may take in an edit a little after
 * a later one, so an issue whose `updated` is a few minutes older than the position can appear after the position
 * moved past it; the query reaches back this far to find it. Issues read twice come with their old content hash and the
 * engine appends nothing for them.
 */
export const OVERLAP_MS = 5 * 60_000;

/** At most this many issues older than the position's minute are remembered as taken (the newest of them). */
const MAX_SEEN_BEFORE = 500;

/**
 * Where the updated-time crawl of one project stands. Jira's JQL compares `updated` to the minute, so the next query
 * starts `OVERLAP_MS` below the minute of the last issue taken (`updated >= "yyyy-MM-dd HH:mm"`) and skips the issues
 * of that window it already took, by id and exact update time: an issue edited again comes back with another time and
 * is taken again.
 */
export interface CrawlPosition {
  /** the start of the minute (UTC epoch ms) of the last issue taken */
  minute: number;
  /** `[issue id, updated epoch ms]` of every issue taken whose update time falls in the overlap window or that minute */
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
  /**
   * a digest of the project's browse verdict and its grants to the people each issue names, when there are such grants
   * (`none` when there are none, `refused` when they could not be read), to find a change that moves no issue
   */
  browse: string | null;
}

interface EncodedCursor extends JiraSyncState {
  v: 1;
  /** the project the positions are in: a cursor of another project means nothing here */
  project: string;
}

export const startState = (): JiraSyncState => ({ position: null, sweepStartedAt: null, sweptAt: null, levels: {}, browse: null });

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
    return { position, sweepStartedAt: time(c.sweepStartedAt), sweptAt: time(c.sweptAt), levels, browse: typeof c.browse === 'string' ? c.browse : null };
  } catch {
    return startState();
  }
}

/**
 * The position after taking an issue updated at `updated` (epoch ms): a later minute moves the position; the issues
 * taken within `OVERLAP_MS` below its minute stay remembered, so the overlap of the next query skips them.
 */
export function advance(position: CrawlPosition | null, id: string, updated: number): CrawlPosition {
  const taken = Math.floor(updated / 60_000) * 60_000;
  const minute = Math.max(taken, position?.minute ?? taken);
  const seen = [...(position?.seen ?? []).filter(([seenId, at]) => seenId !== id && at >= minute - OVERLAP_MS), ...(updated >= minute - OVERLAP_MS ? [[id, updated] as [string, number]] : [])];
  // The issues of the position's minute are all kept (the crawl skips them when it queries that minute again); the
  // older ones of the overlap only up to a bound: one forgotten is read again, and its hash is unchanged.
  const current = seen.filter(([, at]) => at >= minute);
  const before = seen.filter(([, at]) => at < minute).sort((a, b) => b[1] - a[1]).slice(0, MAX_SEEN_BEFORE);
  return { minute, seen: [...before.reverse(), ...current] };
}

/** One formatter per time zone: making one is far slower than using it. */
const formats = new Map<string, Intl.DateTimeFormat>();

/** `yyyy-MM-dd HH:mm` of an instant in a time zone: how JQL writes a date, read in the searching user's zone. */
export function jqlMinute(instant: number, timeZone: string): string {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' });
    formats.set(timeZone, format);
  }
  const parts = format.formatToParts(new Date(instant));
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}

/** The zone's offset from UTC at an instant, in minutes. */
function offsetMinutes(instant: number, timeZone: string): number {
  const local = Date.parse(`${jqlMinute(instant, timeZone).replace(' ', 'T')}:00Z`);
  return Math.round((local - Math.floor(instant / 60_000) * 60_000) / 60_000);
}

/** How far the offset of a zone can change at once; a window this wide around a bound holds any change that affects it. */
const MAX_OFFSET_CHANGE_MS = 3 * 3_600_000;

/**
 * The JQL lower bound for a crawl position, in the account's time zone: `OVERLAP_MS` below the position's minute.
 * Where clocks are set back, a wall-clock time names two instants and Jira may read the later one, up to an offset
 * change later than meant; so when the zone's offset changes within `MAX_OFFSET_CHANGE_MS` of the bound, the bound is
 * moved that much earlier. Some issues are read twice there (and skipped as unchanged) rather than edits missed.
 */
export function jqlLowerBound(minute: number, timeZone: string): string {
  let zone = timeZone;
  try {
    jqlMinute(minute, zone);
  } catch {
    zone = 'UTC';
  }
  const bound = minute - OVERLAP_MS;
  const offsets = new Set<number>();
  for (let at = bound - MAX_OFFSET_CHANGE_MS; at <= bound + MAX_OFFSET_CHANGE_MS; at += 15 * 60_000) offsets.add(offsetMinutes(at, zone));
  return jqlMinute(offsets.size > 1 ? bound - MAX_OFFSET_CHANGE_MS : bound, zone);
}
