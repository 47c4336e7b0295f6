import type { PermissionCapture } from '../connectors/access-precedence';
import type { MetadataValue } from './item-input';

/**
 * Item events, in the item's own stream (`item-<databaseId>-<key>`, key = hash of collection, store and id).
 * Content lives in content-addressed blobs; events carry only the hash.
 */
export type Store = 'memory' | 'knowledge';
export type ItemKind = 'memory' | 'file' | 'app' | 'inferred';
export type IndexingStatus = 'queued' | 'processing' | 'graph_creation' | 'completed' | 'errored';

export interface ContentRef {
  /** sha256 of the stored bytes (hex) */
  sha256: string;
  bytes: number;
  contentType: string;
  filename?: string;
}

export interface ItemIngested {
  type: 'ItemIngested';
  data: {
    databaseId: string;
    itemKey: string;
    collection: string;
    store: Store;
    itemId: string;
    kind: ItemKind;
    title: string | null;
    content: ContentRef;
    /** memory given as user/assistant pairs (content is their JSON) */
    pairs: boolean;
    isMarkdown: boolean;
    infer: boolean;
    customInstructions: string | null;
    userName: string | null;
    /** absolute expiry (RFC 3339) computed at ingest from expiry_time; null = never */
    expiresAt: string | null;
    metadata: Record<string, MetadataValue>;
    additionalMetadata: Record<string, unknown>;
    relations: string[];
    /** normalized ACL; absent (undefined) = unrestricted */
    acl?: string[];
    appKind?: string | null;
    appProvider?: string | null;
    sourceType: string;
    /**
     * Set on a document a connector synced: where it comes from, and the per-document permission the provider
     * captured. Its access is decided on every query from this permission, the resource's provider verdict and the
     * resource's API rule (ACL rule 12, `effectiveAccess`), so a change of the resource's rule applies to it without
     * a re-sync; `acl` is absent on such an item.
     */
    connector?: SyncedItemSource;
  };
}

/** The connector, resource and external document an item was synced from. */
export interface SyncedItemSource {
  connectorId: string;
  resourceId: string;
  /** the document's id at the provider (the item id is derived from it, the account scope and the resource) */
  externalId: string;
  /** the provider's `contentHash` of the document when it was synced */
  contentHash: string;
  /** the per-document permission the provider captured; absent when it captures none */
  permission?: PermissionCapture;
}

export interface StatusAdvanced {
  type: 'StatusAdvanced';
  data: {
    databaseId: string;
    itemKey: string;
    itemId: string;
    collection: string;
    store: Store;
    /** revision of the ItemIngested this status belongs to */
    contentVersion: number;
    status: IndexingStatus;
    /**
     * Set on a derived (inferred) memory's statuses: it was not ingested by a client, so it sends no webhook event
     * (the event's id is the id supplied at ingestion). Absent on events written before this field existed.
     */
    derived?: true;
    errorCode?: string;
    message?: string;
  };
}

/** What the pipeline produced for one content version: recorded so a rebuild never re-runs it. */
export interface ItemChunked {
  type: 'ItemChunked';
  data: {
    databaseId: string;
    itemKey: string;
    contentVersion: number;
    /** sha256 of the JSON chunk list blob: [{index, text, startChar, endChar, headingPath?}] */
    chunksSha256: string;
    chunkCount: number;
    embedder: string;
    format: string;
    parsedBytes: number;
  };
}

export interface ItemDeleted {
  type: 'ItemDeleted';
  data: { databaseId: string; itemKey: string; itemId: string; collection: string; store: Store };
}

/** PATCH /context/{id}/metadata: only the fields sent change. */
export interface ItemMetadataUpdated {
  type: 'ItemMetadataUpdated';
  data: {
    databaseId: string;
    itemKey: string;
    itemId: string;
    collection: string;
    store: Store;
    metadata?: Record<string, MetadataValue>;
    additionalMetadata?: Record<string, unknown>;
    title?: string | null;
  };
}

/** A document ACL replaced (or revoked: ['__private__']); the audit trail of who could see what. */
export interface AclChanged {
  type: 'AclChanged';
  data: { databaseId: string; itemKey: string; itemId: string; collection: string; store: Store; acl: string[]; previous: string[] | null };
}

/**
 * A synced document's per-document provider permission changed at the source and nothing else: its content, version
 * and index entries stay as they are, and the query path decides its access from the new permission (rule 12).
 * `permission` null: the provider no longer gives the document a permission of its own. The audit trail of what the
 * provider said, as AclChanged is for rules set through the API.
 */
export interface ProviderPermissionChanged {
  type: 'ProviderPermissionChanged';
  data: { databaseId: string; itemKey: string; itemId: string; collection: string; store: Store; permission: PermissionCapture | null; previous: PermissionCapture | null };
}

/** What graph extraction produced for one content version (blob: {entities, mentions, relations}). */
export interface GraphExtracted {
  type: 'GraphExtracted';
  data: { databaseId: string; itemKey: string; contentVersion: number; collection: string; graphSha256: string; entityCount: number; relationCount: number; extractor: string };
}

/** What memory inference produced for one content version (blob: [{kind, text}]); the derived memories are items of their own. */
export interface InferenceCompleted {
  type: 'InferenceCompleted';
  data: { databaseId: string; itemKey: string; contentVersion: number; factsSha256: string; derivedIds: string[]; model: string };
}

export type ItemEvent =
  | ItemIngested
  | StatusAdvanced
  | ItemChunked
  | ItemDeleted
  | ItemMetadataUpdated
  | AclChanged
  | ProviderPermissionChanged
  | GraphExtracted
  | InferenceCompleted;
