import type { ExistingDocument } from './provider.port';

export interface Reconciliation {
  /** Known ids the source no longer has: delete them. */
  gone: string[];
  /** Ids the source has whose content hash differs from the known one, or that are not known at all: fetch them. */
  changed: string[];
}

/**
 * Compares what a caller holds (id to the content hash it stored) with what the source lists now. Finds deletions
 * (pruning) and the changes a cursor misses: an update whose change time was set into the past, a row written by a
 * transaction that committed after the cursor passed its time, a row with no change time at all.
 */
export async function reconcile(known: ReadonlyMap<string, string | undefined>, existing: AsyncIterable<ExistingDocument>): Promise<Reconciliation> {
  const seen = new Set<string>();
  const changed: string[] = [];
  for await (const doc of existing) {
    if (seen.has(doc.id)) continue;
    seen.add(doc.id);
    const hash = known.get(doc.id);
    if (!known.has(doc.id) || doc.contentHash === undefined || hash !== doc.contentHash) changed.push(doc.id);
  }
  const gone = [...known.keys()].filter((id) => !seen.has(id));
  return { gone, changed };
}
