import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { DomainError, invalid } from '@crs/domain/errors';
import { decideItem } from '@crs/domain/items/item.decider';
import type { ItemIngested } from '@crs/domain/items/item.events';
import type { AppConfig } from '@crs/config';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { decideOnItems, lastPosition } from '@crs/eventstore/item-stream';
import type { IndexingPipeline } from '@crs/indexing/indexing-pipeline';
import { type BlobStore, DatabaseBlobsDeletedError } from '@crs/persistence/blob-store';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { APP_CONFIG, BLOB_STORE, EVENT_STORE, INDEXING_PIPELINE, PROJECTION_RUNNER } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory, type DatabaseRecord } from '../../databases/database-directory';
import { DatabaseStreams } from '../../databases/database-streams';
import { databaseNotFound } from '../../http/scope';
import {
  prepareAppItems,
  prepareFiles,
  prepareMemories,
  refuseNulOutsideContent,
  type FileMetadataEntry,
  type IngestFile,
  type IngestResultItem,
  type PreparedItem,
} from './prepare-items';

export interface IngestResult {
  success: boolean;
  message: string;
  results: IngestResultItem[];
  success_count: number;
  failed_count: number;
}

/** What is ingested: memories, or knowledge (files with their metadata entries, in file order, and app items). */
export type IngestPayload =
  | { type: 'memory'; memories: unknown }
  | { type: 'knowledge'; files: IngestFile[]; fileMetadata: FileMetadataEntry[]; appKnowledge: unknown };

/** Ingest items into one collection; answers the result and the source type of each item (echoed in the response). */
export class IngestContext extends Command<{ result: IngestResult; sourceTypes: string[] }> {
  constructor(
    readonly caller: Caller,
    readonly database: string,
    readonly collection: string,
    /** An existing id is replaced (true) or fails on its own with ITEM_EXISTS (false). */
    readonly upsert: boolean,
    readonly payload: IngestPayload,
  ) {
    super();
  }
}

/** Blob writes of one request in flight at once. */

/**
 * The whole request is validated first (any invalid item rejects it with 400 and stores nothing). Then every payload
 * goes to the blob store (content-addressed, so a failed request leaves only unreferenced blobs), and each item is
 * decided on its own stream with the item decider, all in one atomic multi-stream append. Items that share an id are
 * decided in request order, each on the state the earlier ones left, so upsert semantics hold within one request.
 * Answers once the items read model shows them (/context/status can see them) and wakes the indexing pipeline.
 */
@CommandHandler(IngestContext)
export class IngestContextHandler implements ICommandHandler<IngestContext> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(INDEXING_PIPELINE) private readonly pipeline: IndexingPipeline,
    private readonly directory: DatabaseDirectory,
    private readonly databases: DatabaseStreams,
  ) {}

  async execute({ caller, database, collection, upsert, payload }: IngestContext): Promise<{ result: IngestResult; sourceTypes: string[] }> {
    const db = await this.directory.resolve(caller.key, database);
    const items =
      payload.type === 'memory'
        ? prepareMemories(db, collection, payload.memories, new Date())
        : [...prepareFiles(db, collection, payload.files, payload.fileMetadata), ...prepareAppItems(db, collection, payload.appKnowledge)];
    if (payload.type === 'knowledge' && !items.length) throw invalid('type=knowledge needs files (field documents) and/or app_knowledge items');
    const result = await this.commit(caller, db, collection, upsert, items);
    return { result, sourceTypes: items.map((i) => i.event.sourceType) };
  }

  private async commit(caller: Caller, db: DatabaseRecord, collection: string, upsert: boolean, items: PreparedItem[]): Promise<IngestResult> {
    if (items.length === 0) throw invalid('nothing to ingest');
    const ctx = caller.ctx;
    // What the request fields hid (metadata is a JSON string inside the JSON): the stored event itself, checked last.
    items.forEach((item, i) => refuseNulOutsideContent(item.event, `item ${i} (${item.result.id})`, []));
    await this.databases.onDatabase({ ...ctx, databaseId: db.id }, db.id, { type: 'EnsureCollection', databaseId: db.id, collection });
    // Every payload of the request stored at once (the small ones in one statement).
    const stored = await this.blobs.putMany(items.map((item) => ({ databaseId: db.id, bytes: item.content })));
    const events: ItemIngested[] = items.map((item, i) => {
      const outcome = stored[i];
      if ('error' in outcome) {
        throw outcome.error instanceof DatabaseBlobsDeletedError ? databaseNotFound(db.name) : outcome.error; // deleted since it was looked up
      }
      const bytes = typeof item.content === 'string' ? Buffer.byteLength(item.content) : item.content.length;
      return { type: 'ItemIngested', data: { ...item.event, content: { ...item.event.content, sha256: outcome.sha256, bytes } } };
    });
    const outcomes = await decideOnItems(
      this.store,
      events.map((event) => ({ ctx, databaseId: db.id, itemKey: event.data.itemKey, decide: (state) => decideItem({ type: 'Ingest', upsert, event }, state) })),
    );
    const results: IngestResultItem[] = outcomes.map((o, i) => {
      if (o.error === undefined) return items[i].result;
      if (!(o.error instanceof DomainError) || o.error.code !== 'ITEM_EXISTS') throw o.error;
      return { ...items[i].result, status: 'failed', error: o.error.message, error_code: o.error.code };
    });
    const last = lastPosition(outcomes);
    if (last !== null) await this.runner.waitFor(last, ['items'], this.config.projectionWaitMs);
    this.pipeline.wake();
    const failed = results.filter((r) => r.status === 'failed').length;
    return {
      success: failed < results.length,
      message: failed ? `${results.length - failed} queued, ${failed} failed` : `${results.length} item(s) queued for indexing`,
      results,
      success_count: results.length - failed,
      failed_count: failed,
    };
  }
}
