import type { SyncCursor } from '../../provider.port';

/**
 * Where a repository's sync stands (the opaque cursor, JSON). Files: the default branch's commit whose files were all
 * read (`commit`), and while a change is being read, its base and target commits and how many of the changed files
 * (sorted by path) are done. Issues: the server time up to which every updated issue was read (`since`), and while a
 * crawl is under way, the `since` it asks with, the server time it started at and the next page.
 */
export interface GitHubCursor {
  v: 1;
  /** the resource settings the cursor was written under (`SyncOptions.selectionKey`) */
  selection: string;
  files: { commit: string | null; pending?: { base: string | null; target: string; done: number } };
  issues: { since: string | null; pending?: { since: string | null; until: string; page: number } };
}

export function initialCursor(selection: string): GitHubCursor {
  return { v: 1, selection, files: { commit: null }, issues: { since: null } };
}

export function encodeCursor(cursor: GitHubCursor): SyncCursor {
  return JSON.stringify(cursor);
}

const isSha = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{40}$/.test(v);
const isTime = (v: unknown): v is string => typeof v === 'string' && !Number.isNaN(Date.parse(v));
const isCount = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min;

/**
 * The position a saved cursor holds; a fresh start for no cursor, one that cannot be read, or one written under other
 * settings (the documents it stands for are not the ones the resource selects now). Starting over is safe: upserts
 * are idempotent and unchanged documents append nothing.
 */
export function decodeCursor(raw: SyncCursor | null, selection: string): GitHubCursor {
  if (raw === null) return initialCursor(selection);
  let c: GitHubCursor;
  try {
    c = JSON.parse(raw) as GitHubCursor;
  } catch {
    return initialCursor(selection);
  }
  const files = c?.files;
  const issues = c?.issues;
  const valid =
    c?.v === 1 &&
    c.selection === selection &&
    typeof files === 'object' && files !== null &&
    (files.commit === null || isSha(files.commit)) &&
    (files.pending === undefined || ((files.pending.base === null || isSha(files.pending.base)) && isSha(files.pending.target) && isCount(files.pending.done, 0))) &&
    typeof issues === 'object' && issues !== null &&
    (issues.since === null || isTime(issues.since)) &&
    (issues.pending === undefined || ((issues.pending.since === null || isTime(issues.pending.since)) && isTime(issues.pending.until) && isCount(issues.pending.page, 1)));
  return valid ? c : initialCursor(selection);
}
