import { invalid } from '@crs/domain/errors';

/** The opaque cursor of a page of delivery records: the log position of the last record it showed. */
export function encodeCursor(position: number): string {
  return Buffer.from(`v1:${position}`, 'utf8').toString('base64url');
}

/** 400 for anything this endpoint did not hand out. */
export function decodeCursor(cursor: string): number {
  const m = /^v1:(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw invalid('cursor is not a next_cursor returned by this endpoint');
  return Number(m[1]);
}
