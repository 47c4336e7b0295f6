import type { CommandContext } from '@crs/eventstore/command-handling';
import type { StoredChunk } from '@crs/search/chunk-docs';
import type { ItemRow } from '@crs/projections/items/items.queries';
import type { DatabaseRow } from '@crs/projections/databases/databases.queries';
import type { ClaimedJob } from '../claim-queue';

/** A claimed item's row, with its database's organization and embedder. */
export type PipelineItem = ItemRow & Pick<DatabaseRow, 'org_id' | 'embedder'>;

/** One item of a batch as it moves through the steps. */
export interface Work {
  job: ClaimedJob;
  item: PipelineItem;
  ctx: CommandContext;
  chunks?: StoredChunk[];
  format?: string;
  parsedBytes?: number;
  chunksSha256?: string;
  /** its stream already records the current version's graph (GraphExtracted), as the index stage leaves it */
  graphed?: boolean;
  /** a recorded failure: the item ends `errored` with this code */
  failure?: PipelineFailure;
  /** an unexpected error: the lease is kept, so it expires and the item is redone */
  retry?: boolean;
  /** the failure is recorded and the lease released */
  done?: boolean;
}

/** Blob reads and writes of a batch in flight at once. */
export const IO_CONCURRENCY = 8;

export class PipelineFailure extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/** Items still moving through the steps (not failed, not left for a retry). */
export function active(work: Work[]): Work[] {
  return work.filter((w) => !w.failure && !w.retry);
}
