import type { MetadataField } from './metadata-schema';

/**
 * Database and registry events, a discriminated union on `type` (every family together: DomainEvent in
 * domain-event.ts). Events are facts; their data is small (large payloads live in content-addressed blobs referenced
 * by hash).
 *
 * Streams (see streams.ts):
 *   databases-<orgId>   DatabaseCreated, DatabaseDeletionRequested, DatabaseDeleted (the audit record that survives deletion)
 *   database-<dbId>     DatabaseComponentProvisioned, CollectionCreated, CollectionDeletionRequested, CollectionDeleted,
 *                       DatabaseEmbedderChanged (a re-embed: `crs databases reembed`)
 */
export type VectorStore = 'knowledge' | 'memories';
export type DatabaseComponent = 'scheduler' | 'graph' | 'vectorstore.knowledge' | 'vectorstore.memories';
export const DATABASE_COMPONENTS: DatabaseComponent[] = ['scheduler', 'graph', 'vectorstore.knowledge', 'vectorstore.memories'];

export interface EmbedderSpec {
  modelId: string;
  dimensions: number;
}

export type DatabaseCreated = {
  type: 'DatabaseCreated';
  data: { databaseId: string; name: string; metadataSchema: MetadataField[]; embedder: EmbedderSpec };
};
export type DatabaseComponentProvisioned = {
  type: 'DatabaseComponentProvisioned';
  data: { databaseId: string; component: DatabaseComponent; detail?: Record<string, unknown> };
};
export type DatabaseDeletionRequested = { type: 'DatabaseDeletionRequested'; data: { databaseId: string; name: string } };
export type DatabaseDeleted = {
  type: 'DatabaseDeleted';
  data: { databaseId: string; name: string; requestedBy: string; requestedAt: string; streamsDeleted: number; itemsDeleted: number };
};
export type CollectionCreated = { type: 'CollectionCreated'; data: { databaseId: string; collection: string } };
export type CollectionDeletionRequested = { type: 'CollectionDeletionRequested'; data: { databaseId: string; collection: string } };
export type CollectionDeleted = {
  type: 'CollectionDeleted';
  data: { databaseId: string; collection: string; requestedBy: string; requestedAt: string; itemsDeleted: number };
};

/** The database's vectors now come from another embedder (its indexes were rebuilt with it). */
export type DatabaseEmbedderChanged = { type: 'DatabaseEmbedderChanged'; data: { databaseId: string; embedder: EmbedderSpec; previous: EmbedderSpec } };

export type DatabaseEvent =
  | DatabaseCreated
  | DatabaseEmbedderChanged
  | DatabaseComponentProvisioned
  | DatabaseDeletionRequested
  | DatabaseDeleted
  | CollectionCreated
  | CollectionDeletionRequested
  | CollectionDeleted;
