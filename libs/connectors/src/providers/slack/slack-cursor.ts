import type { SyncCursor } from '../../provider.port';
import { isTs } from './slack-ts';

/**
 * Where the sync of one channel stands. History is read newest first, by `ts` keyset (`latest` = the oldest message
 * already taken, exclusive), so positions are message timestamps and a page never depends on a Slack cursor that could
 * expire between syncs.
 *
 * - `newest`: the newest top-level message a completed sync has seen. The next sync reads from `newest` minus the
 *   look-back window (`oldest`), down from now.
 * - `crawl`: a sync in progress. `oldest` is its lower bound (null: the whole history), `below` the oldest message it has
 *   taken so far (null: none yet), `newest` the newest message it has seen. Resuming continues below `below`; messages
 *   posted meanwhile are newer than the crawl's first page and wait for the next sync.
 */
export interface ChannelPosition {
  newest: string | null;
  crawl: { oldest: string | null; below: string | null; newest: string | null } | null;
}

interface EncodedCursor extends ChannelPosition {
  v: 1;
  /** the channel the positions belong to: a cursor of another channel means nothing here */
  channel: string;
}

export const START: ChannelPosition = { newest: null, crawl: null };

export function encodeCursor(channel: string, position: ChannelPosition): SyncCursor {
  const c: EncodedCursor = { v: 1, channel, ...position };
  return JSON.stringify(c);
}

const tsOrNull = (value: unknown): value is string | null => value === null || isTs(value);

/**
 * The position a saved cursor stands for. One that cannot be read, or that names another channel, starts from the
 * beginning: every message is read again and upserts are idempotent, so nothing is lost.
 */
export function decodeCursor(channel: string, cursor: SyncCursor | null): ChannelPosition {
  if (cursor === null) return START;
  try {
    const c = JSON.parse(cursor) as Partial<EncodedCursor>;
    if (c.v !== 1 || c.channel !== channel || !tsOrNull(c.newest ?? null)) return START;
    const crawl = c.crawl ?? null;
    if (crawl !== null && !(tsOrNull(crawl.oldest) && tsOrNull(crawl.below) && tsOrNull(crawl.newest))) return START;
    return { newest: c.newest ?? null, crawl };
  } catch {
    return START;
  }
}
