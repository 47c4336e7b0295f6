import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DomainError, invalid } from '@crs/domain/errors';
import { normalizeDocumentAcl } from '@crs/domain/acl';
import { validateMetadata } from '@crs/domain/metadata-schema';
import { decideItem } from '@crs/domain/items/item.decider';
import type { ItemIngested, Store } from '@crs/domain/items/item.events';
import { jsonInputProblem } from '@crs/domain/nul-character';
import { expiryAfter } from '@crs/domain/items/expiry';
import { itemKey, LIMITS, parseAdditionalMetadata, parseAppItem, parseMemoryItem, parseMetadataString, parseRelations, validateItemId, type MemoryInput } from '@crs/domain/items/item-input';
import type { CommandContext } from '@crs/eventstore/command-handling';
import { decideOnItems, lastPosition } from '@crs/eventstore/item-stream';
import { DatabaseStreams } from '../databases/database-streams';
import type { DatabaseRecord } from '../databases/database-directory';
import type { UploadedFile } from '../http/multipart';
import type { AppConfig } from '@crs/config';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { type BlobStore, DatabaseBlobsDeletedError } from '@crs/persistence/blob-store';
import type { IndexingPipeline } from '@crs/indexing/indexing-pipeline';
import { APP_CONFIG, BLOB_STORE, EVENT_STORE, INDEXING_PIPELINE, PROJECTION_RUNNER } from '@crs/platform/tokens';
import { databaseNotFound } from '../http/scope';

export interface IngestResultItem {
  id: string;
  status: 'queued' | 'failed';
  infer?: boolean;
  title?: string | null;
  filename?: string;
  error?: string;
  error_code?: string;
}

export interface IngestResult {
  success: boolean;
  message: string;
  results: IngestResultItem[];
  success_count: number;
  failed_count: number;
}

/** One validated item ready to be appended. */
interface Prepared {
  result: IngestResultItem;
  content: Buffer | string;
  contentType: string;
  event: Omit<ItemIngested['data'], 'content'> & { content: Omit<ItemIngested['data']['content'], 'sha256' | 'bytes'> };
}

/** Blob writes of one request in flight at once. */
const BLOB_CONCURRENCY = 8;

export interface FileMetadataEntry {
  id?: string;
  title?: string;
  metadata?: unknown;
  additional_metadata?: unknown;
  acl?: unknown;
  hasAcl: boolean;
  relations?: unknown;
}

/**
 * Ingest: the whole request is validated first (any invalid item rejects it with 400 and stores nothing);
 * then each item is stored as a blob and appended as ItemIngested to its own stream. Only an existing id with
 * upsert false fails an item on its own.
 */
@Injectable()
export class IngestionService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(INDEXING_PIPELINE) private readonly pipeline: IndexingPipeline,
    private readonly databases: DatabaseStreams,
  ) {}

  prepareMemories(db: DatabaseRecord, collection: string, raw: unknown, now: Date): Prepared[] {
    if (raw === undefined) throw invalid('memories is required for type=memory (a JSON-encoded array of memory items)');
    if (!Array.isArray(raw)) throw invalid('memories must be a JSON-encoded array');
    if (raw.length === 0) throw invalid('memories is empty');
    if (raw.length > LIMITS.itemsPerRequest) throw invalid(`at most ${LIMITS.itemsPerRequest} memories per request`);
    return raw.map((r, i) => {
      refuseNulOutsideContent(r, `memories[${i}]`, ['text', 'user_assistant_pairs']);
      const m: MemoryInput = parseMemoryItem(r, i);
      validateMetadata(db.metadataSchema, m.metadata, `memories[${i}].metadata`);
      const id = m.id ?? randomUUID();
      const content = m.pairs ? JSON.stringify(m.pairs) : m.text!;
      return {
        result: { id, status: 'queued', infer: m.infer, title: m.title },
        content,
        contentType: m.pairs ? 'application/json' : m.isMarkdown ? 'text/markdown' : 'text/plain',
        event: {
          databaseId: db.id, itemKey: itemKey(collection, 'memory', id), collection, store: 'memory' as Store, itemId: id, kind: 'memory', title: m.title,
          content: { contentType: m.pairs ? 'application/json' : m.isMarkdown ? 'text/markdown' : 'text/plain' },
          pairs: Boolean(m.pairs), isMarkdown: m.isMarkdown, infer: m.infer, customInstructions: m.customInstructions, userName: m.userName,
          expiresAt: m.expiryTimeSeconds ? expiryAfter(now, m.expiryTimeSeconds) : null,
          metadata: m.metadata, additionalMetadata: m.additionalMetadata, relations: m.relations, sourceType: 'memory',
        },
      };
    });
  }

  prepareAppItems(db: DatabaseRecord, collection: string, raw: unknown): Prepared[] {
    if (raw === undefined) return [];
    const list = Array.isArray(raw) ? raw : [raw];
    if (list.length > LIMITS.itemsPerRequest) throw invalid(`at most ${LIMITS.itemsPerRequest} app_knowledge items per request`);
    return list.map((r, i) => {
      refuseNulOutsideContent(r, `app_knowledge[${i}]`, ['content']);
      const a = parseAppItem(r, i);
      validateMetadata(db.metadataSchema, a.metadata, `app_knowledge[${i}].metadata`);
      const acl = normalizeDocumentAcl(a.acl, a.hasAcl, `app_knowledge[${i}].acl`);
      const additional = { ...a.additionalMetadata, ...(a.url ? { url: a.url } : {}), ...(a.timestamp ? { timestamp: a.timestamp } : {}) };
      return {
        result: { id: a.id, status: 'queued', title: a.title },
        content: a.text,
        contentType: 'text/plain',
        event: {
          databaseId: db.id, itemKey: itemKey(collection, 'knowledge', a.id), collection, store: 'knowledge' as Store, itemId: a.id, kind: 'app', title: a.title,
          content: { contentType: 'text/plain' }, pairs: false, isMarkdown: false, infer: false, customInstructions: null, userName: null, expiresAt: null,
          metadata: a.metadata, additionalMetadata: additional, relations: [], ...(acl !== undefined ? { acl } : {}),
          appKind: a.appKind, appProvider: a.appProvider, sourceType: a.appProvider ? `app:${a.appProvider}` : 'app',
        },
      };
    });
  }

  prepareFiles(db: DatabaseRecord, collection: string, files: UploadedFile[], perFile: FileMetadataEntry[]): Prepared[] {
    return files.map((f, i) => {
      const meta = perFile[i] ?? { hasAcl: false };
      refuseNulOutsideContent({ ...meta, filename: f.filename }, `file metadata[${i}]`, []);
      const id = validateItemId(meta.id, `file metadata[${i}].id`) ?? randomUUID();
      const metadata = typeof meta.metadata === 'string' ? parseMetadataString(meta.metadata, `file metadata[${i}].metadata`) : (parseAdditionalMetadata(meta.metadata, `file metadata[${i}].metadata`) as any);
      validateMetadata(db.metadataSchema, metadata, `file metadata[${i}].metadata`);
      const acl = normalizeDocumentAcl(meta.acl, meta.hasAcl, `file metadata[${i}].acl`);
      if (f.bytes.length === 0) throw invalid(`file ${f.filename} is empty`);
      return {
        result: { id, status: 'queued', filename: f.filename },
        content: f.bytes,
        contentType: f.contentType,
        event: {
          databaseId: db.id, itemKey: itemKey(collection, 'knowledge', id), collection, store: 'knowledge' as Store, itemId: id, kind: 'file',
          title: typeof meta.title === 'string' ? meta.title : f.filename,
          content: { contentType: f.contentType, filename: f.filename }, pairs: false, isMarkdown: false, infer: false, customInstructions: null, userName: null,
          expiresAt: null, metadata, additionalMetadata: { ...parseAdditionalMetadata(meta.additional_metadata, `file metadata[${i}].additional_metadata`), filename: f.filename },
          relations: parseRelations(meta.relations, `file metadata[${i}].relations`), ...(acl !== undefined ? { acl } : {}), sourceType: 'file',
        },
      };
    });
  }

  /** Appends every prepared item; returns the ingest result. Waits until /context/status can see them. */
  async commit(ctx: CommandContext, db: DatabaseRecord, collection: string, upsert: boolean, items: Prepared[]): Promise<IngestResult> {
    if (items.length === 0) throw invalid('nothing to ingest');
    // What the request fields hid (metadata is a JSON string inside the JSON): the stored event itself, checked last.
    items.forEach((item, i) => refuseNulOutsideContent(item.event, `item ${i} (${item.result.id})`, []));
    await this.databases.onDatabase({ ...ctx, databaseId: db.id }, db.id, { type: 'EnsureCollection', databaseId: db.id, collection });
    // Blobs first (content-addressed, so a failed request leaves only unreferenced files), then one read of every
    // item stream and one atomic append for the whole request. Items that share an id are decided in request
    // order, each on the state the earlier ones left, so upsert semantics hold within one request.
    const events: ItemIngested[] = new Array(items.length);
    let next = 0;
    const putBlobs = async () => {
      for (let i = next++; i < items.length; i = next++) {
        const item = items[i];
        const sha256 = await this.blobs.put(db.id, item.content).catch((err) => {
          throw err instanceof DatabaseBlobsDeletedError ? databaseNotFound(db.name) : err; // deleted since it was looked up
        });
        const bytes = typeof item.content === 'string' ? Buffer.byteLength(item.content) : item.content.length;
        events[i] = { type: 'ItemIngested', data: { ...item.event, content: { ...item.event.content, sha256, bytes } } };
      }
    };
    await Promise.all(Array.from({ length: Math.min(BLOB_CONCURRENCY, items.length) }, putBlobs));
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

/** 400 when a stored field of an item holds U+0000 (content fields, stored as bytes, may). */
function refuseNulOutsideContent(item: unknown, path: string, contentFields: string[]): void {
  const stored = item !== null && typeof item === 'object' && !Array.isArray(item) ? Object.fromEntries(Object.entries(item).filter(([k]) => !contentFields.includes(k))) : item;
  const problem = jsonInputProblem(stored, path);
  if (problem) throw invalid(problem);
}

