import type { DataSource } from 'typeorm';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { CommandContext } from '@crs/eventstore/command-handling';
import { decideOnItem, decideOnItems, lastPosition, loadItemStates, type ItemDecision, type ItemStateCache } from '@crs/eventstore/item-stream';
import { streams } from '@crs/domain/streams';
import type { BatchOutcome } from '@crs/eventstore/command-handling';
import { decideItem, type ItemState } from '@crs/domain/items/item.decider';
import { StepClock } from '@crs/domain/step-clock';
import type { IndexingStatus, ItemEvent } from '@crs/domain/items/item.events';
import type { Embedder } from '@crs/embeddings';
import { chunkPairs, chunkText, parseDocument, ParseError, type Chunk } from '@crs/ingestion';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { ProjectionRunner, RunnerLogger } from '@crs/persistence/projection-runner';
import { embeddingText, type StoredChunk } from '@crs/search/chunk-docs';
import { mapLimit } from '@crs/persistence/map-limit';
import { extractGraph } from '@crs/ingestion/graph/extract-graph';
import type { Inference } from '@crs/ingestion/inference/inference.port';
import { itemKey } from '@crs/domain/items/item-input';
import type { ItemIngested } from '@crs/domain/items/item.events';
import { itemsByKeys, memoriesDerivedFromExcept, type ItemRow } from '@crs/projections/items/items.queries';
import { databaseOwnersAndEmbedders, type DatabaseRow } from '@crs/projections/databases/databases.queries';
import { ClaimQueue, type ClaimedJob } from './claim-queue';
import type { PipelineOptions } from './pipeline-options';

export { PIPELINE_DDL, type ClaimedJob } from './claim-queue';
export type { PipelineOptions } from './pipeline-options';

/** A claimed item's row, with its database's organization and embedder. */
type PipelineItem = ItemRow & Pick<DatabaseRow, 'org_id' | 'embedder'>;

/** One item of a batch as it moves through the steps. */
interface Work {
  job: ClaimedJob;
  item: PipelineItem;
  ctx: CommandContext;
  chunks?: StoredChunk[];
  format?: string;
  parsedBytes?: number;
  chunksSha256?: string;
  /** a recorded failure: the item ends `errored` with this code */
  failure?: PipelineFailure;
  /** an unexpected error: the lease is kept, so it expires and the item is redone */
  retry?: boolean;
  /** the failure is recorded and the lease released */
  done?: boolean;
}

/** Blob reads and writes of a batch in flight at once. */
const IO_CONCURRENCY = 8;

/** Recorded with every extraction, so a change of extractor is visible in the log. */
const GRAPH_EXTRACTOR = 'wink-lexicon-v2';

class PipelineFailure extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/**
 * The indexing pipeline: queued → processing → (parse, chunk, embed, index) → graph_creation → (graph) →
 * completed, or errored with a code. Work is claimed through leases in Postgres (INSERT ... ON CONFLICT, so
 * several workers compete safely); a worker killed mid-item leaves a lease that expires and the item is
 * redone. Chunk ids are deterministic and status moves are decided on the item stream with an expected
 * revision, so a redo never duplicates chunks or statuses.
 *
 * Items go through in batches: each step decides on every item stream of the batch with one read and one atomic
 * append (see decideOnItems), embeddings are computed in one call, and the batch waits once for the index.
 */
export class IndexingPipeline {
  private readonly queue: ClaimQueue;
  private readonly steps = new StepClock();

  constructor(
    private readonly ds: DataSource,
    private readonly store: EventStore,
    private readonly blobs: BlobStore,
    private readonly embedder: Embedder,
    private readonly inference: Inference,
    private readonly runner: ProjectionRunner,
    private readonly log: RunnerLogger,
    private readonly options: PipelineOptions,
  ) {
    this.queue = new ClaimQueue(ds, options, this.steps, log, (jobs) => this.processBatch(jobs));
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

  /**
   * The claimed items' rows and their databases' org and embedder, in two queries. One join of the three (keys,
   * items, databases) let the planner, on the fresh statistics of a young database, scan every item of the database
   * once per key (seen at 300 ms per batch, growing with the database); the items alone by their primary key have no
   * such plan.
   */
  private async loadItems(jobs: ClaimedJob[]): Promise<PipelineItem[]> {
    const items = await itemsByKeys(this.ds, jobs.map((j) => j.database_id), jobs.map((j) => j.item_key));
    if (!items.length) return [];
    const dbs = await databaseOwnersAndEmbedders(this.ds, [...new Set(items.map((i) => i.database_id))]);
    const byId = new Map(dbs.map((d) => [d.id, d]));
    return items.flatMap((i) => {
      const d = byId.get(i.database_id);
      return d ? [{ ...i, org_id: d.org_id, embedder: d.embedder }] : [];
    });
  }

  /**
   * A batch's item streams, as read at its start and kept current by its own appends: the steps after the first
   * decide without reading the streams again. Forgotten when the batch ends; anyone else's append to one of
   * them meanwhile fails the expected-revision check and that step reads afresh.
   */
  private readonly streamStates: ItemStateCache = new Map();

  private async processBatch(jobs: ClaimedJob[]): Promise<void> {
    try {
      await this.processClaimed(jobs);
    } finally {
      for (const j of jobs) this.streamStates.delete(streams.item(j.database_id, j.item_key));
    }
  }

  private async processClaimed(jobs: ClaimedJob[]): Promise<void> {
    const rows: PipelineItem[] = await this.timed('batch.load', jobs.length, () => this.loadItems(jobs));
    const byKey = new Map(rows.map((r) => [`${r.database_id}/${r.item_key}`, r]));
    // The stage comes from the item's stream, not the read model: a claim made while the read model lagged
    // behind a status move must neither redo the step nor skip the next.
    const states = await loadItemStates(this.store, jobs.map((j) => ({ databaseId: j.database_id, itemKey: j.item_key })), this.streamStates);
    const indexing: Work[] = [];
    const graphing: Work[] = [];
    const gone: ClaimedJob[] = [];
    for (const job of jobs) {
      const item = byKey.get(`${job.database_id}/${job.item_key}`);
      const state = states.get(streams.item(job.database_id, job.item_key));
      const w: Work | undefined = item && { job, item, ctx: { orgId: item.org_id, actor: 'system:pipeline', databaseId: item.database_id } };
      // Deleted, superseded by a newer version, or already finished: nothing to do.
      if (!w || !state?.live || item!.content_version !== job.content_version || state.contentVersion !== job.content_version) gone.push(job);
      else if (state.status === 'queued' || state.status === 'processing') indexing.push(w);
      else if (state.status === 'graph_creation') graphing.push(w);
      else gone.push(job);
    }
    await this.queue.release(gone);
    try {
      for (const w of [...indexing, ...graphing]) {
        if (w.job.attempts > this.options.maxAttempts) w.failure = new PipelineFailure('PROCESSING_FAILED', `gave up after ${this.options.maxAttempts} attempts`);
      }
      if (indexing.length) await this.timed('index', indexing.length, () => this.indexStage(indexing));
      if (graphing.length) await this.timed('graph', graphing.length, () => this.graphStage(graphing));
    } catch (err) {
      // Unexpected (engine down, disk full...): keep the leases so they expire and the batch is retried.
      this.log.error({ items: jobs.length, err: (err as Error).message }, 'pipeline batch failed; will retry');
    }
  }

  /** processing → parse, chunk, embed → ItemChunked → (the index catches up) → graph_creation: searchable. */
  private async indexStage(work: Work[]): Promise<void> {
    for (const w of active(work)) {
      if (w.item.embedder.modelId !== this.embedder.modelId) {
        w.failure = new PipelineFailure('EMBEDDER_MISMATCH', `database embeds with ${w.item.embedder.modelId} but this worker runs ${this.embedder.modelId}; re-embed the database or configure the same embedder`);
      }
    }
    await this.timed('index.processing', work.length, () => this.record(active(work).map((w) => this.advance(w, 'processing'))));
    await this.finishFailed(work);

    await this.timed('index.chunk_embed', work.length, () => this.chunkAll(work));
    const chunked = await this.timed('index.record_chunked', work.length, () => this.record(
      active(work).map((w) => ({
        ...this.on(w),
        decide: (state: ItemState): ItemEvent[] =>
          state.live && state.contentVersion === w.item.content_version && !state.chunked
            ? [{ type: 'ItemChunked', data: { databaseId: w.item.database_id, itemKey: w.item.item_key, contentVersion: w.item.content_version, chunksSha256: w.chunksSha256!, chunkCount: w.chunks!.length, embedder: this.embedder.modelId, format: w.format!, parsedBytes: w.parsedBytes! } }]
            : [],
      })),
    ));
    await this.finishFailed(work);
    if (!active(work).length) return;
    // Searchable only once the chunks are in the index (and the item rows say so). An item chunked by an earlier
    // attempt decides nothing now: then wait for the head.
    const chunkedAt = lastPosition(chunked);
    const indexedAt = chunkedAt !== null && chunked.every((o) => o.events?.length) ? chunkedAt : await this.store.headPosition();
    const indexed = await this.timed('index.wait_index', work.length, () => this.runner.waitFor(indexedAt, ['search-index', 'items'], 60_000));
    if (!indexed) throw new Error('the search index did not catch up in time');
    await this.timed('index.record_searchable', work.length, () => this.record(active(work).map((w) => this.advance(w, 'graph_creation'))));
    await this.queue.release(active(work).map((w) => w.job));
    this.wake();
  }

  /** Graph extraction → GraphExtracted → (the graph catches up) → inference for `infer` items → completed. */
  private async graphStage(work: Work[]): Promise<void> {
    await this.finishFailed(work);
    await mapLimit(active(work), IO_CONCURRENCY, async (w) => {
      try {
        if (!w.item.chunks_sha256) throw new Error('graph_creation without a chunk list');
        w.chunks = JSON.parse((await this.blobs.get(w.item.database_id, w.item.chunks_sha256)).toString('utf8'));
      } catch (err) {
        this.unexpected(w, err);
      }
    });
    await this.graphAll(work);
    // Inference (rare, possibly a remote model) goes item by item, between GraphExtracted and completed.
    for (const w of active(work).filter((x) => x.item.infer)) {
      try {
        await this.infer(w.ctx, w.item);
      } catch (err) {
        this.unexpected(w, err);
      }
    }
    await this.timed('graph.record_completed', work.length, () => this.record(active(work).map((w) => this.advance(w, 'completed'))));
    await this.queue.release(active(work).map((w) => w.job));
  }

  /** Parse and chunk every item, embed all chunks in one call (filling the cache the index reads), store the chunk lists. */
  private async chunkAll(work: Work[]): Promise<void> {
    await mapLimit(active(work), IO_CONCURRENCY, async (w) => {
      try {
        const { chunks, format, parsedBytes } = await this.chunk(w.item);
        w.chunks = chunks.map((c) => ({ index: c.index, text: c.text, startChar: c.startChar, endChar: c.endChar, ...(c.headingPath ? { headingPath: c.headingPath } : {}) }));
        w.format = format;
        w.parsedBytes = parsedBytes;
      } catch (err) {
        if (err instanceof ParseError) w.failure = new PipelineFailure(err.code, err.message);
        else this.unexpected(w, err);
      }
    });
    const texts = active(work).flatMap((w) => w.chunks!.map(embeddingText));
    if (texts.length) await this.embedder.embed(texts);
    await mapLimit(active(work), IO_CONCURRENCY, async (w) => {
      try {
        w.chunksSha256 = await this.blobs.put(w.item.database_id, JSON.stringify(w.chunks));
      } catch (err) {
        this.unexpected(w, err); // (its database deleted meanwhile: the retry finds the item gone)
      }
    });
  }

  /**
   * Entities and relations into the context graph; the result is recorded (blob + GraphExtracted), never recomputed
   * on replay.
   */
  private async graphAll(work: Work[]): Promise<void> {
    const decisions: ItemDecision[] = [];
    const started = process.hrtime.bigint();
    await mapLimit(active(work), IO_CONCURRENCY, async (w) => {
      try {
        const graph = extractGraph({ chunks: w.chunks!, appProvider: w.item.app_provider, appKind: w.item.app_kind });
        const graphSha256 = await this.blobs.put(w.item.database_id, JSON.stringify(graph));
        const { item } = w;
        decisions.push({
          ...this.on(w),
          decide: (state) =>
            state.live && state.contentVersion === item.content_version && !state.graphed
              ? [{ type: 'GraphExtracted', data: { databaseId: item.database_id, itemKey: item.item_key, contentVersion: item.content_version, collection: item.collection, graphSha256, entityCount: graph.entities.length, relationCount: graph.relations.length, extractor: GRAPH_EXTRACTOR } }]
              : [],
        });
      } catch (err) {
        this.unexpected(w, err);
      }
    });
    this.steps.add('graph.extract', work.length, started);
    const graphedAt = lastPosition(await this.timed('graph.record_graph', work.length, () => this.record(decisions)));
    // `completed` means the graph is queryable too.
    if (graphedAt !== null && !(await this.timed('graph.wait_graph', work.length, () => this.runner.waitFor(graphedAt, ['graph'], 60_000)))) {
      throw new Error('the graph did not catch up in time');
    }
  }

  /**
   * Memory inference: facts extracted from the input become derived memories (items of their own, linked to the
   * source by `derived_from`), appended before InferenceCompleted so a redo after a crash completes the set; an
   * unchanged derived memory is not appended again, and ones no longer produced are deleted.
   */
  private async infer(ctx: CommandContext, item: PipelineItem): Promise<void> {
    const raw = (await this.blobs.get(item.database_id, item.content_sha256)).toString('utf8');
    const facts = await this.inference.extract({
      ...(item.pairs ? { pairs: JSON.parse(raw) } : { text: raw }),
      userName: item.user_name,
      customInstructions: item.custom_instructions,
    });
    const factsSha256 = await this.blobs.put(item.database_id, JSON.stringify(facts));
    const derivedIds = facts.map((_, i) => `${item.item_id}::inferred:${i}`);
    let last: number | null = null;
    for (const [i, fact] of facts.entries()) {
      const id = derivedIds[i];
      const key = itemKey(item.collection, 'memory', id);
      const sha256 = await this.blobs.put(item.database_id, fact.text);
      const event: ItemIngested = {
        type: 'ItemIngested',
        data: {
          databaseId: item.database_id, itemKey: key, collection: item.collection, store: 'memory', itemId: id, kind: 'inferred', title: null,
          content: { sha256, bytes: Buffer.byteLength(fact.text), contentType: 'text/plain' }, pairs: false, isMarkdown: false, infer: false,
          customInstructions: null, userName: item.user_name, expiresAt: item.expires_at ? new Date(item.expires_at).toISOString() : null, metadata: item.metadata,
          additionalMetadata: { derived_from: item.item_id, inferred_kind: fact.kind, inference_model: this.inference.modelId }, relations: [item.item_id],
          ...(item.acl ? { acl: item.acl } : {}), sourceType: 'inferred_memory',
        },
      };
      last = (await decideOnItem(this.store, ctx, item.database_id, key, (state) => (state.live && state.contentSha === sha256 ? [] : [event]))) ?? last;
    }
    const stale = await memoriesDerivedFromExcept(this.ds, item.database_id, item.collection, item.item_id, derivedIds);
    for (const s of stale) {
      const ids = { databaseId: item.database_id, itemKey: s.item_key, itemId: s.item_id, collection: item.collection, store: 'memory' as const };
      await decideOnItem(this.store, ctx, item.database_id, s.item_key, (state) => (state.live ? [{ type: 'ItemDeleted', data: ids }] : []));
    }
    await decideOnItem(this.store, ctx, item.database_id, item.item_key, (state) =>
      state.live && state.contentVersion === item.content_version && !state.inferred
        ? [{ type: 'InferenceCompleted', data: { databaseId: item.database_id, itemKey: item.item_key, contentVersion: item.content_version, factsSha256, derivedIds, model: this.inference.modelId } }]
        : [],
    );
    if (last !== null) this.wake();
  }

  private async chunk(item: PipelineItem): Promise<{ chunks: Chunk[]; format: string; parsedBytes: number }> {
    const bytes = await this.blobs.get(item.database_id, item.content_sha256);
    const opts = { maxTokens: this.options.chunkTokens, title: item.title };
    if (item.pairs) {
      const pairs = JSON.parse(bytes.toString('utf8'));
      return { chunks: chunkPairs(pairs, opts), format: 'pairs', parsedBytes: bytes.length };
    }
    if (item.kind === 'file') {
      const parsed = await parseDocument({ bytes, filename: item.filename ?? 'upload', contentType: item.content_type });
      return { chunks: chunkText(parsed.text, { ...opts, isMarkdown: parsed.isMarkdown, title: item.title ?? parsed.title }), format: parsed.format, parsedBytes: parsed.text.length };
    }
    const text = bytes.toString('utf8');
    return { chunks: chunkText(text, { ...opts, isMarkdown: item.is_markdown }), format: item.is_markdown ? 'markdown' : 'text', parsedBytes: text.length };
  }

  private on(w: Work): Omit<ItemDecision, 'decide'> {
    return { ctx: w.ctx, databaseId: w.item.database_id, itemKey: w.item.item_key };
  }

  private advance(w: Work, status: IndexingStatus, errorCode?: string, message?: string): ItemDecision {
    const { item } = w;
    return {
      ...this.on(w),
      decide: (state) =>
        decideItem(
          { type: 'Advance', contentVersion: item.content_version, status, errorCode, message, ids: { databaseId: item.database_id, itemKey: item.item_key, itemId: item.item_id, collection: item.collection, store: item.store } },
          state,
        ),
    };
  }

  /** Appends the decisions in one go; a decision that throws is a bug, so it fails the batch (which is retried). */
  private async record(decisions: ItemDecision[]): Promise<BatchOutcome<unknown>[]> {
    const outcomes = await decideOnItems(this.store, decisions, this.streamStates);
    for (const o of outcomes) if (o.error !== undefined) throw o.error;
    return outcomes;
  }

  /** Records `errored` for the items that failed and releases them. */
  private async finishFailed(work: Work[]): Promise<void> {
    const failed = work.filter((w) => w.failure && !w.done);
    if (!failed.length) return;
    await this.record(failed.map((w) => this.advance(w, 'errored', w.failure!.code, w.failure!.message)));
    for (const w of failed) w.done = true;
    await this.queue.release(failed.map((w) => w.job));
  }

  private unexpected(w: Work, err: unknown): void {
    w.retry = true;
    this.log.error({ item: w.item.item_id, err: (err as Error).message, attempt: w.job.attempts }, 'pipeline step failed; will retry');
  }
}

/** Items still moving through the steps (not failed, not left for a retry). */
function active(work: Work[]): Work[] {
  return work.filter((w) => !w.failure && !w.retry);
}
