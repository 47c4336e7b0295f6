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
 * The CQL bound for pages modified since `since`, less `overlapMs`: `yyyy-MM-dd HH:mm` (CQL compares to the minute),
 * rounded down. Confluence reads it in the timezone of the connector's account; a page the crawl misses for that
 * reason, or because it was back-dated, is still found in the same sync by the listing's version check.
 */
export function cqlSince(since: string, overlapMs: number): string {
  const at = new Date(Date.parse(since) - overlapMs);
  return at.toISOString().slice(0, 16).replace('T', ' ');
}
