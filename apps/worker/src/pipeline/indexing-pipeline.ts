import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { EventStore } from '../../../../libs/eventstore/src/event-store.port';
import type { CommandContext } from '../../../../libs/eventstore/src/command-handling';
import { decideOnItem } from '../item-stream';
import { decideItem, type ItemState } from '../../../../libs/domain/src/items/item.decider';
import type { IndexingStatus, ItemEvent } from '../../../../libs/domain/src/items/item.events';
import type { Embedder } from '../../../../libs/embeddings/src';
import { chunkPairs, chunkText, parseDocument, ParseError, type Chunk } from '../../../../libs/ingestion/src';
import type { BlobStore } from '../../../../libs/persistence/src/blob-store';
import type { ProjectionRunner, RunnerLogger } from '../../../../libs/persistence/src/projection-runner';
import { embeddingText, type StoredChunk } from '../search/chunk-docs';
import { ClaimLoop } from '../../../../libs/persistence/src/claim-loop';
import { extractGraph } from '../../../../libs/ingestion/src/graph/extract-graph';
import type { Inference } from '../../../../libs/ingestion/src/inference/inference.port';
import { itemKey } from '../../../../libs/domain/src/items/item-input';
import type { ItemIngested } from '../../../../libs/domain/src/items/item.events';

export const PIPELINE_DDL = `CREATE TABLE IF NOT EXISTS pipeline_leases (
  database_id uuid NOT NULL,
  item_key text NOT NULL,
  content_version integer NOT NULL,
  owner text NOT NULL,
  lease_until timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 1,
  PRIMARY KEY (database_id, item_key)
)`;

export interface PipelineOptions {
  /** Items processed at once by this worker. */
  concurrency: number;
  /** A claim expires after this long; a worker that died mid-item loses it and another redoes the item. */
  leaseMs: number;
  /** Attempts before an item that keeps failing unexpectedly is marked errored. */
  maxAttempts: number;
  /** Idle poll interval. */
  pollMs: number;
  /** Max tokens per chunk. */
  chunkTokens: number;
  /** Hook to run between graph_creation and completed (entity extraction); may throw to fail the item. */
  graphStep?: (job: ClaimedJob) => Promise<void>;
}

export interface ClaimedJob {
  database_id: string;
  item_key: string;
  content_version: number;
  attempts: number;
}

interface ItemRow {
  database_id: string;
  item_key: string;
  item_id: string;
  collection: string;
  store: 'memory' | 'knowledge';
  kind: string;
  title: string | null;
  filename: string | null;
  content_sha256: string;
  content_type: string;
  pairs: boolean;
  is_markdown: boolean;
  content_version: number;
  status: IndexingStatus;
  app_provider: string | null;
  app_kind: string | null;
  infer: boolean;
  user_name: string | null;
  custom_instructions: string | null;
  expires_at: Date | null;
  metadata: Record<string, any>;
  acl: string[] | null;
}

/** Recorded with every extraction, so a change of extractor is visible in the log. */
const GRAPH_EXTRACTOR = 'wink-compromise-v1';

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
 */
export class IndexingPipeline {
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly loop: ClaimLoop<ClaimedJob>;

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
    this.loop = new ClaimLoop<ClaimedJob>({
      concurrency: options.concurrency,
      pollMs: options.pollMs,
      claim: (n) => this.claim(n),
      work: (job) => this.process(job),
      onError: (err, phase) => this.log.error({ err: (err as Error).message }, `pipeline ${phase} failed`),
    });
  }

  static async migrate(ds: DataSource): Promise<void> {
    await ds.query(PIPELINE_DDL);
  }

  start(): void {
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  async queueDepth(): Promise<number> {
    const [row] = await this.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE status IN ('queued', 'processing')`);
    return row.n;
  }

  /** Claims up to `n` items whose status is queued/processing and whose lease is free or expired. */
  async claim(n: number): Promise<ClaimedJob[]> {
    return this.ds.query(
      `INSERT INTO pipeline_leases (database_id, item_key, content_version, owner, lease_until, attempts)
       SELECT i.database_id, i.item_key, i.content_version, $1, now() + ($2 || ' milliseconds')::interval, 1
       FROM rm_items i LEFT JOIN pipeline_leases l ON l.database_id = i.database_id AND l.item_key = i.item_key
       WHERE i.status IN ('queued', 'processing')
         AND (l.item_key IS NULL OR l.lease_until < now() OR l.content_version < i.content_version)
       ORDER BY i.ingest_position
       LIMIT $3
       ON CONFLICT (database_id, item_key) DO UPDATE
         SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, content_version = EXCLUDED.content_version,
             attempts = CASE WHEN pipeline_leases.content_version = EXCLUDED.content_version THEN pipeline_leases.attempts + 1 ELSE 1 END
         WHERE pipeline_leases.lease_until < now() OR pipeline_leases.content_version < EXCLUDED.content_version
       RETURNING database_id, item_key, content_version, attempts`,
      [this.owner, String(this.options.leaseMs), n],
    );
  }

  private async process(job: ClaimedJob): Promise<void> {
    const [item]: ItemRow[] = await this.ds.query('SELECT * FROM rm_items WHERE database_id = $1 AND item_key = $2', [job.database_id, job.item_key]);
    if (!item || item.content_version !== job.content_version || !['queued', 'processing'].includes(item.status)) return this.release(job);
    const ctx: CommandContext = { orgId: '', actor: `system:pipeline`, databaseId: job.database_id };
    const [db] = await this.ds.query('SELECT org_id, embedder FROM rm_databases WHERE id = $1', [job.database_id]);
    if (!db) return this.release(job);
    ctx.orgId = db.org_id;
    try {
      if (job.attempts > this.options.maxAttempts) throw new PipelineFailure('PROCESSING_FAILED', `gave up after ${this.options.maxAttempts} attempts`);
      await this.advance(ctx, item, 'processing');
      if (db.embedder.modelId !== this.embedder.modelId) {
        throw new PipelineFailure('EMBEDDER_MISMATCH', `database embeds with ${db.embedder.modelId} but this worker runs ${this.embedder.modelId}; re-embed the database or configure the same embedder`);
      }
      const { chunks, format, parsedBytes } = await this.chunk(item);
      const stored: StoredChunk[] = chunks.map((c) => ({ index: c.index, text: c.text, startChar: c.startChar, endChar: c.endChar, ...(c.headingPath ? { headingPath: c.headingPath } : {}) }));
      if (stored.length) await this.embedder.embed(stored.map(embeddingText)); // fills the embedding cache the index projection reads
      const chunksSha256 = await this.blobs.put(item.database_id, JSON.stringify(stored));
      const chunkedAt = await this.onItem(ctx, item, (state) =>
        state.live && state.contentVersion === item.content_version && !state.chunked
          ? [{ type: 'ItemChunked', data: { databaseId: item.database_id, itemKey: item.item_key, contentVersion: item.content_version, chunksSha256, chunkCount: stored.length, embedder: this.embedder.modelId, format, parsedBytes } }]
          : [],
      );
      // Searchable only once the chunks are in the index (and the item row says so).
      const indexedAt = chunkedAt ?? (await this.store.headPosition()); // already chunked by an earlier attempt
      if (!(await this.runner.waitFor(indexedAt, ['search-index', 'items'], 60_000))) throw new Error('the search index did not catch up in time');
      await this.advance(ctx, item, 'graph_creation');
      await this.extractGraph(ctx, item, stored);
      if (item.infer) await this.infer(ctx, item);
      await this.options.graphStep?.(job);
      await this.advance(ctx, item, 'completed');
      await this.release(job);
    } catch (err) {
      const failure = err instanceof PipelineFailure ? err : err instanceof ParseError ? new PipelineFailure(err.code, err.message) : null;
      if (!failure) {
        // Unexpected (engine down, disk full...): keep the lease so it expires and the item is retried.
        this.log.error({ item: item.item_id, err: (err as Error).message, attempt: job.attempts }, 'pipeline step failed; will retry');
        return;
      }
      await this.advance(ctx, item, 'errored', failure.code, failure.message).catch((e) => this.log.error({ err: (e as Error).message }, 'could not record errored'));
      await this.release(job);
    }
  }

  /** Entities and relations into the context graph; the result is recorded (blob + GraphExtracted), never recomputed on replay. */
  private async extractGraph(ctx: CommandContext, item: ItemRow, chunks: StoredChunk[]): Promise<void> {
    const graph = extractGraph({ chunks, appProvider: item.app_provider, appKind: item.app_kind });
    const graphSha256 = await this.blobs.put(item.database_id, JSON.stringify(graph));
    await this.onItem(ctx, item, (state) =>
      state.live && state.contentVersion === item.content_version && !state.graphed
        ? [{ type: 'GraphExtracted', data: { databaseId: item.database_id, itemKey: item.item_key, contentVersion: item.content_version, collection: item.collection, graphSha256, entityCount: graph.entities.length, relationCount: graph.relations.length, extractor: GRAPH_EXTRACTOR } }]
        : [],
    );
  }

  /**
   * Memory inference: facts extracted from the input become derived memories (items of their own, linked to the
   * source by `derived_from`), appended before InferenceCompleted so a redo after a crash completes the set; an
   * unchanged derived memory is not appended again, and ones no longer produced are deleted.
   */
  private async infer(ctx: CommandContext, item: ItemRow): Promise<void> {
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
    const stale: { item_key: string; item_id: string }[] = await this.ds.query(
      `SELECT item_key, item_id FROM rm_items WHERE database_id = $1 AND collection = $2 AND store = 'memory' AND additional_metadata->>'derived_from' = $3 AND NOT (item_id = ANY($4))`,
      [item.database_id, item.collection, item.item_id, derivedIds],
    );
    for (const s of stale) {
      const ids = { databaseId: item.database_id, itemKey: s.item_key, itemId: s.item_id, collection: item.collection, store: 'memory' as const };
      await decideOnItem(this.store, ctx, item.database_id, s.item_key, (state) => (state.live ? [{ type: 'ItemDeleted', data: ids }] : []));
    }
    await this.onItem(ctx, item, (state) =>
      state.live && state.contentVersion === item.content_version && !state.inferred
        ? [{ type: 'InferenceCompleted', data: { databaseId: item.database_id, itemKey: item.item_key, contentVersion: item.content_version, factsSha256, derivedIds, model: this.inference.modelId } }]
        : [],
    );
    if (last !== null) this.wake();
  }

  private async chunk(item: ItemRow): Promise<{ chunks: Chunk[]; format: string; parsedBytes: number }> {
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

  private advance(ctx: CommandContext, item: ItemRow, status: IndexingStatus, errorCode?: string, message?: string) {
    return this.onItem(ctx, item, (state) =>
      decideItem(
        { type: 'Advance', contentVersion: item.content_version, status, errorCode, message, ids: { databaseId: item.database_id, itemKey: item.item_key, itemId: item.item_id, collection: item.collection, store: item.store } },
        state,
      ),
    );
  }

  private onItem(ctx: CommandContext, item: ItemRow, decide: (state: ItemState) => ItemEvent[]): Promise<number | null> {
    return decideOnItem(this.store, ctx, item.database_id, item.item_key, decide);
  }

  private async release(job: ClaimedJob): Promise<void> {
    await this.ds.query('DELETE FROM pipeline_leases WHERE database_id = $1 AND item_key = $2 AND owner = $3', [job.database_id, job.item_key, this.owner]);
  }
}
