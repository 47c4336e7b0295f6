import type { DomainEvent } from '../domain-event';
import { conflict, notFound, unknownCommand } from '../errors';
import { isMetadataValue, type MetadataValue } from './item-input';
import type { IndexingStatus, ItemEvent, ItemIngested } from './item.events';
import type { PermissionCapture } from '../connectors/access-precedence';
import { samePermission, syncedFingerprint, syncedItemState, type SyncedItemState } from './synced-item';

/** One item's stream folded: is it live, which content version, which status. */
export interface ItemState {
  live: boolean;
  /** current stored ACL (undefined = unrestricted) */
  acl?: string[];
  contentVersion: number | null;
  status: IndexingStatus | null;
  chunked: boolean;
  graphed?: boolean;
  inferred?: boolean;
  /** sha256 of the current content */
  contentSha?: string;
  /** a derived (inferred) memory, not a client's item */
  derived?: true;
  /** set while the current version was synced by a connector: its source and what a sync compares (synced-item.ts) */
  synced?: SyncedItemState;
}
export const initialItem = (): ItemState => ({ live: false, contentVersion: null, status: null, chunked: false });

const ORDER: IndexingStatus[] = ['queued', 'processing', 'graph_creation', 'completed'];

/** A status the pipeline has not yet passed `status` from (never a terminal one: errored is not in ORDER). */
const isBefore = (current: IndexingStatus | null, status: IndexingStatus): boolean => current !== null && ORDER.includes(current) && ORDER.indexOf(current) < ORDER.indexOf(status);

/**
 * `revision` is the event's revision in the stream (the ItemIngested revision becomes the content version). An event
 * of another family leaves the state as it is.
 */
export function evolveItem(state: ItemState, event: DomainEvent & { revision?: number }): ItemState {
  switch (event.type) {
    case 'ItemIngested': {
      const synced = event.data.connector ? syncedItemState(event.data) : undefined;
      return {
        live: true,
        acl: event.data.acl,
        contentSha: event.data.content.sha256,
        contentVersion: event.revision ?? (state.contentVersion ?? -1) + 1,
        status: 'queued',
        chunked: false,
        ...(event.data.kind === 'inferred' ? { derived: true as const } : {}),
        ...(synced ? { synced } : {}),
      };
    }
    case 'AclChanged':
      return { ...state, acl: event.data.acl };
    case 'ProviderPermissionChanged': {
      if (!state.synced) return state;
      const { permission: _previous, ...synced } = state.synced;
      return { ...state, synced: event.data.permission ? { ...synced, permission: event.data.permission } : synced };
    }
    case 'ItemMetadataUpdated':
      return state;
    case 'InferenceCompleted':
      return event.data.contentVersion === state.contentVersion ? { ...state, inferred: true } : state;
    case 'GraphExtracted':
      // Recorded once the chunks are in the search index, so it stands for `graph_creation` (searchable) as well.
      return event.data.contentVersion === state.contentVersion ? { ...state, graphed: true, status: isBefore(state.status, 'graph_creation') ? 'graph_creation' : state.status } : state;
    case 'StatusAdvanced':
      return event.data.contentVersion === state.contentVersion ? { ...state, status: event.data.status } : state;
    case 'ItemChunked':
      // A chunk list recorded means the pipeline has the item: `processing`, whether or not a StatusAdvanced said so.
      return event.data.contentVersion === state.contentVersion ? { ...state, chunked: true, status: isBefore(state.status, 'processing') ? 'processing' : state.status } : state;
    case 'ItemDeleted':
      return initialItem();
    default:
      return state;
  }
}

type ItemIds = { databaseId: string; itemKey: string; itemId: string; collection: string; store: 'memory' | 'knowledge' };

export type ItemCommand =
  | { type: 'Ingest'; upsert: boolean; event: ItemIngested }
  /**
   * A connector's sync of one document (`event.data.connector` set): the event, unless the live item already says
   * what it would (same fingerprint: content hash, title, metadata, permission, instructions, collection), so syncing
   * an unchanged source appends nothing.
   */
  | { type: 'SyncDocument'; event: ItemIngested }
  /**
   * A connector learned that only this document's per-document permission changed (a `permission` sync event): the
   * change on the live synced item, nothing for an item that is not live or not synced, or already says it.
   */
  | { type: 'SyncPermission'; ids: ItemIds; permission: PermissionCapture | null }
  | { type: 'UpdateMetadata'; ids: ItemIds; metadata?: Record<string, unknown>; additionalMetadata?: Record<string, unknown>; title?: string | null; acl?: string[] }
  | { type: 'Delete'; ids: ItemIds }
  | { type: 'Advance'; contentVersion: number; status: IndexingStatus; errorCode?: string; message?: string; ids: ItemIds };


/** The same principals in the same order (stored ACLs are normalized, so equal lists are equal arrays). */
const sameList = (a: string[], b: string[] | undefined): boolean => b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

/** The fields whose value a metadata field can hold, in order: all of them for metadata parsed from JSON. */
function metadataValues(metadata: Record<string, unknown>): Record<string, MetadataValue> {
  const out: Record<string, MetadataValue> = {};
  for (const [key, value] of Object.entries(metadata)) if (isMetadataValue(value)) out[key] = value;
  return out;
}

/** A synced item's permission-only change: nothing when it already says the same (the audit trail records changes only). */
function decidePermission(state: ItemState, of: { data: ItemIds }, permission: PermissionCapture | null): ItemEvent[] {
  if (!state.live || !state.synced || samePermission(state.synced.permission, permission)) return [];
  const { databaseId, itemKey, itemId, collection, store } = of.data;
  return [{ type: 'ProviderPermissionChanged', data: { databaseId, itemKey, itemId, collection, store, permission, previous: state.synced.permission ?? null } }];
}

export function decideItem(command: ItemCommand, state: ItemState): ItemEvent[] {
  switch (command.type) {
    case 'Ingest':
      if (state.live && !command.upsert) throw conflict('ITEM_EXISTS', `an item with id '${command.event.data.itemId}' already exists (upsert is false)`);
      return [command.event];
    case 'SyncDocument': {
      if (state.live && state.synced !== undefined && state.synced.fingerprint === syncedFingerprint(command.event.data)) {
        return decidePermission(state, command.event, command.event.data.connector?.permission ?? null);
      }
      // A document's own rule (a metadata `acl` edit) outlives a new version from the source: dropping it would widen
      // the document back to its resource's rule (rule 13: deleting a rule never widens).
      if (state.live && state.acl !== undefined) return [{ ...command.event, data: { ...command.event.data, acl: state.acl } }];
      return [command.event];
    }
    case 'SyncPermission':
      return decidePermission(state, { data: command.ids }, command.permission);
    case 'UpdateMetadata': {
      if (!state.live) throw notFound('ITEM_NOT_FOUND', `no item with id '${command.ids.itemId}'`);
      const out: ItemEvent[] = [];
      const { metadata, additionalMetadata, title } = command;
      if (metadata !== undefined || additionalMetadata !== undefined || title !== undefined) {
        out.push({ type: 'ItemMetadataUpdated', data: { ...command.ids, ...(metadata !== undefined ? { metadata: metadataValues(metadata) } : {}), ...(additionalMetadata !== undefined ? { additionalMetadata } : {}), ...(title !== undefined ? { title } : {}) } });
      }
      // The same list again changes nothing: no AclChanged (the audit trail records changes only).
      if (command.acl !== undefined && !sameList(command.acl, state.acl)) out.push({ type: 'AclChanged', data: { ...command.ids, acl: command.acl, previous: state.acl ?? null } });
      return out;
    }
    case 'Delete':
      if (!state.live) throw notFound('ITEM_NOT_FOUND', `no item with id '${command.ids.itemId}'`);
      return [{ type: 'ItemDeleted', data: command.ids }];
    case 'Advance': {
      // Only the current content version moves, only forwards, and never out of a terminal status.
      if (!state.live || state.contentVersion !== command.contentVersion) return [];
      if (state.status === 'completed' || state.status === 'errored') return [];
      if (command.status !== 'errored' && state.status && ORDER.indexOf(command.status) <= ORDER.indexOf(state.status)) return [];
      return [{ type: 'StatusAdvanced', data: { ...command.ids, contentVersion: command.contentVersion, status: command.status, ...(state.derived ? { derived: true as const } : {}), ...(command.errorCode ? { errorCode: command.errorCode } : {}), ...(command.message ? { message: command.message } : {}) } }];
    }
    default: {
      const never: never = command;
      throw unknownCommand(never);
    }
  }
}
