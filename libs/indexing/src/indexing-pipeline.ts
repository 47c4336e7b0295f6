import type { DataSource } from 'typeorm';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ItemStateCache } from '@crs/eventstore/item-stream';
import { streams } from '@crs/domain/streams';
import { StepClock } from '@crs/domain/step-clock';
import type { Embedder } from '@crs/embeddings';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { ProjectionRunner, RunnerLogger } from '@crs/persistence/projection-runner';
import type { Inference } from '@crs/ingestion/inference/inference.port';
import { ClaimQueue, type ClaimedJob } from './claim-queue';
import type { PipelineOptions } from './pipeline-options';
import { BatchLoader } from './stages/load';
import { StatusRecorder } from './stages/status';
import { Chunker } from './stages/chunk';
import { ChunkEmbedder } from './stages/embed';
import { ChunkLists } from './stages/chunk-list';
import { IndexWait } from './stages/index-wait';
import { GraphExtraction } from './stages/graph';
import { MemoryInference } from './stages/infer';
import { active, type Work } from './stages/work';

export { PIPELINE_DDL, type ClaimedJob } from './claim-queue';
export type { PipelineOptions } from './pipeline-options';

/** How long a batch chunks and embeds before its items are recorded as `processing` (PipelineOptions.processingMarkMs). */
export const PROCESSING_MARK_MS = 1000;

/**
 * The indexing pipeline: queued → processing → (parse, chunk, embed, index, extract the graph) → graph_creation →
 * (the graph read model catches up, inference) → completed, or errored with a code. A memory writes four events:
 * ItemIngested, ItemChunked (processing), GraphExtracted (graph_creation) and StatusAdvanced completed. Work is
 * claimed through leases in Postgres (INSERT ... ON CONFLICT, so several workers compete safely); a worker killed
 * mid-item leaves a lease that expires and the item is redone. Chunk ids are deterministic and status moves are
 * decided on the item stream with an expected revision, so a redo never duplicates chunks or statuses.
 *
 * Items go through in batches: each step decides on every item stream of the batch with one read and one atomic
 * append (see decideOnItems), embeddings are computed in one call, and the batch waits once for the index.
 *
 * This class runs a claimed batch through the steps; the claiming is `ClaimQueue`'s, each step is in `stages/`.
 */
export class IndexingPipeline {
  private readonly steps = new StepClock();
  private readonly queue: ClaimQueue;
  private readonly loader: BatchLoader;
  private readonly status: StatusRecorder;
  private readonly chunker: Chunker;
  private readonly embedding: ChunkEmbedder;
  private readonly chunkLists: ChunkLists;
  private readonly indexWait: IndexWait;
  private readonly graph: GraphExtraction;
  private readonly memoryInference: MemoryInference;

  /**
   * A batch's item streams, as read at its start and kept current by its own appends: the steps after the first
   * decide without reading the streams again. Forgotten when the batch ends; anyone else's append to one of
   * them meanwhile fails the expected-revision check and that step reads afresh.
   */
  private readonly streamStates: ItemStateCache = new Map();

  constructor(
    ds: DataSource,
    store: EventStore,
    blobs: BlobStore,
    embedder: Embedder,
    inference: Inference,
    runner: ProjectionRunner,
    private readonly log: RunnerLogger,
    private readonly options: PipelineOptions,
  ) {
    this.queue = new ClaimQueue(ds, options, this.steps, log, (jobs) => this.processBatch(jobs));
    this.loader = new BatchLoader(ds, store, this.steps);
    this.status = new StatusRecorder(store, this.streamStates, this.queue, log);
    this.chunker = new Chunker(blobs, this.status, options.chunkTokens);
    this.embedding = new ChunkEmbedder(embedder);
    this.chunkLists = new ChunkLists(blobs, this.status);
    this.indexWait = new IndexWait(store, runner, this.steps);
    this.graph = new GraphExtraction(store, blobs, runner, this.steps, this.status);
    this.memoryInference = new MemoryInference(ds, store, blobs, inference, this.status, () => this.wake());
  }

  static async migrate(ds: DataSource): Promise<void> {
    await ClaimQueue.migrate(ds);
  }

  start(): void {
    this.queue.start();
  }

  wake(): void {
    this.queue.wake();
  }

  async stop(): Promise<void> {
    await this.queue.stop();
  }

  /** Wall time and items per step since start (exposed on /metrics; the speed benchmark reads it). */
  stepTimes(): ReadonlyMap<string, { seconds: number; items: number }> {
    return this.steps.times();
  }

  private timed<T>(step: string, items: number, fn: () => Promise<T>): Promise<T> {
    return this.steps.timed(step, items, fn);
  }

  async queueDepth(): Promise<number> {
    return this.queue.depth();
  }

  /** Claims up to `n` items, the index stage first (see ClaimQueue.claim). */
  async claim(n: number): Promise<ClaimedJob[]> {
    return this.queue.claim(n);
  }

  private async processBatch(jobs: ClaimedJob[]): Promise<void> {
    try {
      await this.processClaimed(jobs);
    } finally {
      for (const j of jobs) this.streamStates.delete(streams.item(j.database_id, j.item_key));
    }
  }

  private async processClaimed(jobs: ClaimedJob[]): Promise<void> {
    const { indexing, graphing, gone } = await this.loader.load(jobs, this.streamStates);
    await this.queue.release(gone);
    try {
      this.status.giveUpAfter(this.options.maxAttempts, [...indexing, ...graphing]);
      if (indexing.length) await this.timed('index', indexing.length, () => this.indexStage(indexing));
      if (graphing.length) await this.timed('graph', graphing.length, () => this.graphStage(graphing));
    } catch (err) {
      // Unexpected (engine down, disk full...): keep the leases so they expire and the batch is retried.
      this.log.error({ items: jobs.length, err: (err as Error).message }, 'pipeline batch failed; will retry');
    }
  }

  /**
   * parse, chunk, embed → ItemChunked (the item is `processing`) → (the index catches up) → the graph extracted →
   * GraphExtracted (`graph_creation`: searchable). No status event of its own for either move: the events the steps
   * record say it. An explicit `processing` status is recorded only for a batch still chunking and embedding after
   * `processingMarkMs` (large files, a slow remote embedder); a batch of short items reaches ItemChunked sooner.
   */
  private async indexStage(work: Work[]): Promise<void> {
    this.embedding.refuseOtherEmbedders(work);
    await this.status.finishFailed(work);

    // Parse and chunk every item, embed all chunks in one call (filling the cache the index reads), store the chunk lists.
    let marking: Promise<unknown> | undefined;
    const mark = setTimeout(() => {
      marking = this.timed('index.processing', work.length, () => this.status.record(active(work).map((w) => this.status.advance(w, 'processing'))));
      // Awaited below; handled now so a failure before then is not an unhandled rejection.
      marking.catch(() => undefined);
    }, this.options.processingMarkMs ?? PROCESSING_MARK_MS);
    try {
      await this.timed('index.chunk_embed', work.length, async () => {
        await this.chunker.chunkAll(work);
        await this.embedding.embedAll(work);
        await this.chunkLists.storeAll(work);
      });
    } finally {
      clearTimeout(mark);
      // Its appends go first: the next step decides on the streams as they left them.
      if (marking) await marking;
    }
    const chunked = await this.timed('index.record_chunked', work.length, () => this.chunkLists.recordChunked(work, this.embedding.modelId));
    await this.status.finishFailed(work);
    if (!active(work).length) return;
    await this.indexWait.untilIndexed(chunked, work.length);
    // Searchable: the graph of the chunks in hand is recorded, and its GraphExtracted stands for graph_creation.
    await this.timed('index.record_searchable', work.length, () => this.graph.recordGraphs(work));
    await this.queue.release(active(work).map((w) => w.job));
    this.wake();
  }

  /** (the graph catches up) → inference for `infer` items → completed. */
  private async graphStage(work: Work[]): Promise<void> {
    await this.status.finishFailed(work);
    // Items that reached graph_creation by a StatusAdvanced (a log with a status event for every move) have no graph yet.
    const ungraphed = work.filter((w) => !w.graphed);
    await this.graph.loadChunkLists(ungraphed);
    const recorded = await this.graph.recordGraphs(ungraphed);
    await this.graph.untilGraphed(recorded, work);
    await this.memoryInference.inferAll(work);
    await this.timed('graph.record_completed', work.length, () => this.status.record(active(work).map((w) => this.status.advance(w, 'completed'))));
    await this.queue.release(active(work).map((w) => w.job));
  }
}
