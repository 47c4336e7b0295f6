import { randomUUID } from 'node:crypto';
import { invalid } from '@crs/domain/errors';
import { normalizeDocumentAcl } from '@crs/domain/acl';
import { validateMetadata } from '@crs/domain/metadata-schema';
import type { ItemIngested, Store } from '@crs/domain/items/item.events';
import { jsonInputProblem } from '@crs/domain/nul-character';
import { expiryAfter } from '@crs/domain/items/expiry';
import { itemKey, LIMITS, parseAdditionalMetadata, parseAppItem, parseMemoryItem, parseMetadataObject, parseMetadataString, parseRelations, validateItemId, type MemoryInput } from '@crs/domain/items/item-input';
import type { DatabaseRecord } from '../../databases/database-directory';

/** What an ingest answers for one item. */
export interface IngestResultItem {
  id: string;
  status: 'queued' | 'failed';
  infer?: boolean;
  title?: string | null;
  filename?: string;
  error?: string;
  error_code?: string;
}

/** An uploaded file: its name, declared type and bytes. */
export interface IngestFile {
  filename: string;
  contentType: string;
  bytes: Buffer;
}

/** One file's entry of `document_metadata` / `file_metadata`, as sent; `hasAcl` says whether the key `acl` was there. */
export interface FileMetadataEntry {
  id?: string;
  title?: string;
  metadata?: unknown;
  additional_metadata?: unknown;
  acl?: unknown;
  hasAcl: boolean;
  relations?: unknown;
}

/** One validated item ready to be appended. */
export interface PreparedItem {
  result: IngestResultItem;
  content: Buffer | string;
  contentType: string;
  event: Omit<ItemIngested['data'], 'content'> & { content: Omit<ItemIngested['data']['content'], 'sha256' | 'bytes'> };
}

/*
 * Each function validates one kind of input completely (any invalid item rejects the whole request with 400 and
 * stores nothing) and turns it into the ItemIngested data its append needs, less the content hash.
 */

export function prepareMemories(db: DatabaseRecord, collection: string, raw: unknown, now: Date): PreparedItem[] {
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

export function prepareAppItems(db: DatabaseRecord, collection: string, raw: unknown): PreparedItem[] {
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

export function prepareFiles(db: DatabaseRecord, collection: string, files: IngestFile[], perFile: FileMetadataEntry[]): PreparedItem[] {
  return files.map((f, i) => {
    const meta = perFile[i] ?? { hasAcl: false };
    refuseNulOutsideContent({ ...meta, filename: f.filename }, `file metadata[${i}]`, []);
    const id = validateItemId(meta.id, `file metadata[${i}].id`) ?? randomUUID();
    const metadata = typeof meta.metadata === 'string' ? parseMetadataString(meta.metadata, `file metadata[${i}].metadata`) : parseMetadataObject(meta.metadata, `file metadata[${i}].metadata`);
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


/** 400 when a stored field of an item holds U+0000 (content fields, stored as bytes, may). */
export function refuseNulOutsideContent(item: unknown, path: string, contentFields: string[]): void {
  const stored = item !== null && typeof item === 'object' && !Array.isArray(item) ? Object.fromEntries(Object.entries(item).filter(([k]) => !contentFields.includes(k))) : item;
  const problem = jsonInputProblem(stored, path);
  if (problem) throw invalid(problem);
}

