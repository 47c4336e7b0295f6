import type { DomainEvent } from './domain-event';
import { conflict, notFound, unknownCommand } from './errors';
import type { DatabaseComponent, DatabaseEvent, EmbedderSpec } from './events';
import type { MetadataField } from './metadata-schema';

/**
 * Database lifecycle, decided over two streams: the organization's database registry (names are unique
 * per organization among live databases) and each database's own stream (components, collections).
 */
export interface RegistryState {
  /** live (not deleted) databases by name */
  byName: Record<string, { databaseId: string; deleting: boolean }>;
}
export const initialRegistry = (): RegistryState => ({ byName: {} });

/** Folds the registry stream; any other event leaves the state as it is. */
export function evolveRegistry(state: RegistryState, event: DomainEvent): RegistryState {
  switch (event.type) {
    case 'DatabaseCreated':
      return { byName: { ...state.byName, [event.data.name]: { databaseId: event.data.databaseId, deleting: false } } };
    case 'DatabaseDeletionRequested': {
      const entry = state.byName[event.data.name];
      return entry ? { byName: { ...state.byName, [event.data.name]: { ...entry, deleting: true } } } : state;
    }
    case 'DatabaseDeleted': {
      const { [event.data.name]: _gone, ...rest } = state.byName;
      return { byName: rest };
    }
    default:
      return state;
  }
}

export type RegistryCommand =
  | { type: 'CreateDatabase'; databaseId: string; name: string; metadataSchema: MetadataField[]; embedder: EmbedderSpec }
  | { type: 'RequestDatabaseDeletion'; name: string };

export function decideRegistry(command: RegistryCommand, state: RegistryState): DatabaseEvent[] {
  switch (command.type) {
    case 'CreateDatabase': {
      const existing = state.byName[command.name];
      if (existing) {
        throw existing.deleting
          ? conflict('DATABASE_DELETING', `database '${command.name}' is being deleted; try again once deletion has finished`)
          : conflict('DATABASE_EXISTS', `database '${command.name}' already exists`);
      }
      return [{ type: 'DatabaseCreated', data: { databaseId: command.databaseId, name: command.name, metadataSchema: command.metadataSchema, embedder: command.embedder } }];
    }
    case 'RequestDatabaseDeletion': {
      const existing = state.byName[command.name];
      if (!existing) throw notFound('DATABASE_NOT_FOUND', `database '${command.name}' was not found`);
      if (existing.deleting) return []; // idempotent: deletion already under way
      return [{ type: 'DatabaseDeletionRequested', data: { databaseId: existing.databaseId, name: command.name } }];
    }
    default: {
      const never: never = command;
      throw unknownCommand(never);
    }
  }
}

export interface DatabaseState {
  provisioned: Set<DatabaseComponent>;
  /** collection name -> deleting? */
  collections: Map<string, boolean>;
  /** set by a re-embed; until then the embedder the database was created with (on the registry stream) */
  embedder?: EmbedderSpec;
}
export const initialDatabase = (): DatabaseState => ({ provisioned: new Set(), collections: new Map() });

/** Folds a database's stream; any other event leaves the state as it is. */
export function evolveDatabase(state: DatabaseState, event: DomainEvent): DatabaseState {
  switch (event.type) {
    case 'DatabaseComponentProvisioned':
      return { ...state, provisioned: new Set([...state.provisioned, event.data.component]) };
    case 'CollectionCreated':
      return { ...state, collections: new Map([...state.collections, [event.data.collection, false]]) };
    case 'DatabaseEmbedderChanged':
      return { ...state, embedder: event.data.embedder };
    case 'CollectionDeletionRequested':
      return { ...state, collections: new Map([...state.collections, [event.data.collection, true]]) };
    case 'CollectionDeleted': {
      const collections = new Map(state.collections);
      collections.delete(event.data.collection);
      return { ...state, collections };
    }
    default:
      return state;
  }
}

export type DatabaseCommand =
  | { type: 'MarkProvisioned'; databaseId: string; component: DatabaseComponent; detail?: Record<string, unknown> }
  | { type: 'EnsureCollection'; databaseId: string; collection: string }
  | { type: 'RequestCollectionDeletion'; databaseId: string; collection: string }
  /** `createdWith`: the embedder recorded at creation, the current one when no re-embed happened yet */
  | { type: 'ChangeEmbedder'; databaseId: string; embedder: EmbedderSpec; createdWith: EmbedderSpec };

export function decideDatabase(command: DatabaseCommand, state: DatabaseState): DatabaseEvent[] {
  switch (command.type) {
    case 'MarkProvisioned':
      if (state.provisioned.has(command.component)) return [];
      return [{ type: 'DatabaseComponentProvisioned', data: { databaseId: command.databaseId, component: command.component, ...(command.detail ? { detail: command.detail } : {}) } }];
    case 'EnsureCollection': {
      const deleting = state.collections.get(command.collection);
      if (deleting === true) throw conflict('COLLECTION_DELETING', `collection '${command.collection}' is being deleted; try again once deletion has finished`);
      if (deleting === false) return [];
      return [{ type: 'CollectionCreated', data: { databaseId: command.databaseId, collection: command.collection } }];
    }
    case 'RequestCollectionDeletion': {
      const deleting = state.collections.get(command.collection);
      if (deleting === undefined) throw notFound('COLLECTION_NOT_FOUND', `collection '${command.collection}' was not found`);
      if (deleting) return [];
      return [{ type: 'CollectionDeletionRequested', data: { databaseId: command.databaseId, collection: command.collection } }];
    }
    case 'ChangeEmbedder': {
      const current = state.embedder ?? command.createdWith;
      if (current.modelId === command.embedder.modelId && current.dimensions === command.embedder.dimensions) return [];
      return [{ type: 'DatabaseEmbedderChanged', data: { databaseId: command.databaseId, embedder: command.embedder, previous: current } }];
    }
    default: {
      const never: never = command;
      throw unknownCommand(never);
    }
  }
}
