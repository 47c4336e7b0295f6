export interface PipelineOptions {
  /** Batches processed at once by this worker (one can compute while another waits on the index). */
  concurrency: number;
  /** Items per batch: their status moves, chunk lists and graphs are appended together, one round trip per step. */
  batchSize: number;
  /** A claim expires after this long; a worker that died mid-item loses it and another redoes the item. */
  leaseMs: number;
  /** Attempts before an item that keeps failing unexpectedly is marked errored. */
  maxAttempts: number;
  /** Idle poll interval. */
  pollMs: number;
  /** Max tokens per chunk. */
  chunkTokens: number;
  /**
   * A batch still chunking and embedding after this long has its items recorded as `processing`; a quicker batch
   * goes straight to its chunk lists, which mean `processing` too (default PROCESSING_MARK_MS, 1 s).
   */
  processingMarkMs?: number;
}
