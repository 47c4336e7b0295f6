import type { DataSource } from 'typeorm';
import { itemStatusesByIds } from '@crs/projections/items/items.queries';

export interface StatusEntry {
  id: string;
  indexing_status: string;
  success: boolean;
  error_code: string | null;
  error_message: string | null;
  message: string;
  collection?: string;
  type?: string;
  /** the item's source type (`memory`, `file`, `app`, `app:<provider>`) */
  source_type?: string;
  title?: string | null;
  updated_at?: string;
}

const MESSAGES: Record<string, string> = {
  queued: 'Queued for indexing',
  processing: 'Being parsed, chunked and embedded',
  graph_creation: 'Searchable; building the context graph',
  completed: 'Fully indexed',
  errored: 'Indexing failed',
};

/** Status entries for item ids in a database (optionally one collection); unknown ids (and those of a collection being deleted) get `not_found`. */
export async function itemStatuses(ds: DataSource, databaseId: string, ids: string[], collection?: string): Promise<StatusEntry[]> {
  const rows = await itemStatusesByIds(ds, databaseId, ids, collection);
  const out: StatusEntry[] = [];
  for (const id of ids) {
    const matches = rows.filter((r) => r.item_id === id);
    if (!matches.length) {
      out.push({ id, indexing_status: 'not_found', success: false, error_code: 'ITEM_NOT_FOUND', error_message: `no item with id '${id}'`, message: `no item with id '${id}'` });
      continue;
    }
    for (const r of matches) {
      const failed = r.status === 'errored';
      out.push({
        id,
        indexing_status: r.status,
        success: !failed,
        error_code: r.error_code,
        error_message: r.error_message,
        message: failed ? r.error_message ?? MESSAGES.errored : MESSAGES[r.status],
        collection: r.collection,
        type: r.store,
        source_type: r.source_type,
        title: r.title,
        updated_at: new Date(r.updated_at).toISOString(),
      });
    }
  }
  return out;
}

/** The entries that found an item (a response about one of them echoes its source type). */
export const foundEntries = (entries: StatusEntry[]) => entries.filter((e): e is StatusEntry & { source_type: string } => e.source_type !== undefined);
