import type { SyncCursor } from '../../provider.port';
import type { GrantMapping } from './google-drive-permissions';

/**
 * Where a sync of one shared drive or folder stands.
 *
 * A first sync takes the changes feed's position (changes.getStartPageToken) before anything else, then lists the
 * resource (`walk`), then reads the feed from that position, so whatever changed while it listed comes back through
 * the feed. Later syncs read only the feed (changes.list from `pageToken`).
 *
 * `contentSince` is what lets the feed tell a content change from a permission-only change without downloading: a
 * file reported by the feed whose modification (or creation) time is later than it changed its content since the
 * last sync, and is read again; any other was only re-shared, moved or renamed, and becomes a `permission` event.
 * It is the server's time (the HTTP Date) at the first answer of the previous complete read of the feed, less a lag
 * (GoogleDriveProviderOptions.feedLagMs) for the feed's delay and clocks. What the comparison cannot see (an edit saved
 * with an earlier modification time, a file moved in from elsewhere) shows in the listing the engine takes before each
 * crawl: its content hash differs from the stored one, and the engine reads the file again (`fetchDocuments`).
 */
export interface DriveCursor {
  /**
   * The cursor's version. 2: every file document carries its readers in force as its permission. A cursor of another
   * version (1: files whose readers were their resource's carried none) starts over, so every file is listed and
   * captured again.
   */
  v: typeof CURSOR_VERSION;
  /** `<resource type>:<resource id>` the cursor was written for: another one starts over */
  scope: string;
  /** the changes feed read: a shared drive's own, or (null) the account's */
  feedDriveId: string | null;
  /** the feed position to read next */
  pageToken: string;
  /** epoch ms; see above */
  contentSince: number;
  /** while the feed is read: what `contentSince` becomes once it is read to its end */
  nextContentSince: number | null;
  /**
   * The folders of the resource: id → parent id (null for the resource's root) and a digest of the folder's grant
   * ids. For a folder resource it is the scope (a file is in it when its parent is); for both kinds, a folder whose
   * grants or place change has every file under it captured again (the files inherit its grants).
   */
  folders: Record<string, FolderEntry>;
  /**
   * The readers of the resource (the shared drive's members, or the folder's grants) when the crawl last read them: a
   * file with the same readers carries no permission of its own. Read again when the feed shows the drive or the
   * resource's folder changed.
   */
  readers: GrantMapping;
  /** the first sync's listing while it runs; null once done */
  walk: WalkPosition | null;
}

export interface FolderEntry {
  p: string | null;
  g: string;
}

/**
 * A listing's position: a shared drive is listed in one query over the drive; a folder tree breadth first, a batch
 * of folders per query (`'a' in parents or 'b' in parents ...`).
 */
export type WalkPosition = { kind: 'drive'; pageToken: string | null } | { kind: 'tree'; pending: string[]; batch: string[]; pageToken: string | null };

export const CURSOR_VERSION = 2;

export function encodeCursor(cursor: DriveCursor): SyncCursor {
  return JSON.stringify(cursor);
}

/**
 * The position a saved cursor stands for, or null to start over: no cursor, one that cannot be read, one of another
 * version, or one written for another resource. Starting over takes the feed's position first, then lists the resource
 * again; upserts of unchanged documents append nothing.
 */
export function decodeCursor(text: SyncCursor | null, scope: string): DriveCursor | null {
  if (text === null) return null;
  let c: DriveCursor;
  try {
    c = JSON.parse(text) as DriveCursor;
  } catch {
    return null;
  }
  if (c === null || typeof c !== 'object' || c.v !== CURSOR_VERSION || c.scope !== scope) return null;
  if (typeof c.pageToken !== 'string' || c.pageToken === '' || typeof c.contentSince !== 'number' || !(c.nextContentSince === null || typeof c.nextContentSince === 'number')) return null;
  if (!(c.feedDriveId === null || typeof c.feedDriveId === 'string') || typeof c.folders !== 'object' || c.folders === null) return null;
  if (typeof c.readers !== 'object' || c.readers === null || typeof c.readers.unresolved !== 'number' || !(c.readers.acl === null || Array.isArray(c.readers.acl))) return null;
  return c.walk === null || isWalkPosition(c.walk) ? c : null;
}

function isWalkPosition(w: unknown): w is WalkPosition {
  if (typeof w !== 'object' || w === null) return false;
  const p = w as Record<string, unknown>;
  const token = p.pageToken === null || typeof p.pageToken === 'string';
  const ids = (x: unknown) => Array.isArray(x) && x.every((id) => typeof id === 'string');
  if (p.kind === 'drive') return token;
  return p.kind === 'tree' && token && ids(p.pending) && ids(p.batch) && (p.batch as string[]).length > 0;
}
