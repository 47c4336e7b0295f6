import type { SyncCursor } from '../../provider.port';
import type { RowMapping } from './postgres-mapping';

/**
 * Where a sync of one relation stands. With an update column a sync reads two parts, each by keyset:
 * - `nulls`: the rows whose update column is NULL, by id. They carry no change time, so every sync reads all of them;
 *   callers skip the unchanged ones by content hash.
 * - `dated`: the other rows by (update column, id), after the last position any earlier sync reached.
 * Without an update column (`all`) every sync reads every row by id.
 */
export interface SyncPosition {
  phase: 'nulls' | 'dated' | 'all';
  /** the id after which the `nulls` or `all` part continues; null: from its start */
  after: string[] | null;
  /** the last (update column, id) the `dated` part reached, across syncs */
  dated: { u: string; k: string[] } | null;
}

interface EncodedCursor extends SyncPosition {
  v: 1;
  /** the columns the positions are in: a cursor written under other columns means nothing now */
  columns: string;
}

function columnsSignature(m: RowMapping): string {
  return JSON.stringify([m.updateColumn?.name ?? null, m.idColumns.map((c) => c.name)]);
}

export function startPosition(m: RowMapping): SyncPosition {
  return { phase: m.updateColumn ? 'nulls' : 'all', after: null, dated: null };
}

export function encodeCursor(m: RowMapping, p: SyncPosition): SyncCursor {
  const c: EncodedCursor = { v: 1, columns: columnsSignature(m), ...p };
  return JSON.stringify(c);
}

/**
 * The position a saved cursor stands for. A cursor that cannot be read, or that was written under other id or update
 * columns (the resource's settings changed), starts the sync from the beginning: every row is read again and upserts
 * are idempotent, so nothing is lost.
 */
export function decodeCursor(m: RowMapping, cursor: SyncCursor | null): SyncPosition {
  if (cursor === null) return startPosition(m);
  try {
    const c = JSON.parse(cursor) as EncodedCursor;
    if (c.v !== 1 || c.columns !== columnsSignature(m)) return startPosition(m);
    if (!['nulls', 'dated', 'all'].includes(c.phase)) return startPosition(m);
    return { phase: c.phase, after: c.after ?? null, dated: c.dated ?? null };
  } catch {
    return startPosition(m);
  }
}
