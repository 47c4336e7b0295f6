import { createHash } from 'node:crypto';
import type { ConnectorSettings } from '@crs/domain/connectors/connector.decider';
import type { ResourceSettings } from '@crs/domain/connectors/connector.events';
import { effectiveInstructions } from '@crs/domain/connectors/effective-instructions';
import { isMetadataValue, itemKey, LIMITS, type MetadataValue } from '@crs/domain/items/item-input';
import type { ItemIngested, SyncedItemSource } from '@crs/domain/items/item.events';
import type { SyncedDocument } from '@crs/connectors/provider.port';

/** Synced documents are knowledge. */
export const SYNCED_STORE = 'knowledge' as const;

/**
 * The item id of a synced document: one per (provider, account scope, resource, external id), so two connectors of
 * one provider on different accounts (distinct `provider_account_scope`, spec rule 5) never share an item, and the
 * same document synced again (after a crash, by another process) is the same item.
 */
export function syncedItemId(provider: string, accountScope: string, resourceId: string, externalId: string): string {
  const digest = createHash('sha256').update([provider, accountScope, resourceId, externalId].join('\u0000')).digest('hex').slice(0, 40);
  return `${provider}-${digest}`;
}

/** Where a resource's documents go: the resource's collection, else the connector's. */
export const resourceCollection = (connector: ConnectorSettings, resource: ResourceSettings): string => resource.collection ?? connector.collection;

export interface DocumentTarget {
  connectorId: string;
  resourceId: string;
  connector: ConnectorSettings;
  resource: ResourceSettings;
}

/** A synced document as an item: the `ItemIngested` it becomes (content stored apart), and its payload. */
export interface SyncedItem {
  externalId: string;
  itemId: string;
  itemKey: string;
  /** the event's data, `content` without the blob's hash and size (known once the payload is stored) */
  data: Omit<ItemIngested['data'], 'content'> & { content: { contentType: string } };
  payload: string | Buffer;
}

const metadataValues = (record: Record<string, unknown> | null | undefined): Record<string, MetadataValue> => {
  const out: Record<string, MetadataValue> = {};
  for (const [k, v] of Object.entries(record ?? {})) if (v !== undefined && isMetadataValue(v)) out[k] = v;
  return out;
};

/**
 * The item a document becomes (docs/connectors.md, "Sync engine"): knowledge of kind `app`, source type
 * `app:<provider>`; `metadata` is the resource's metadata, then the provider's facts, then the system fields
 * `connector_id`, `provider` (and `custom_instructions` when any apply), which win; `additional_metadata` is the
 * resource's additional metadata, then the provider's filterable fields, then `connector_id` and `resource_id`. The
 * item carries no `acl`: its access is decided on each query from `connector.permission` and the resource's rules.
 */
export function syncedItem(target: DocumentTarget, doc: SyncedDocument): SyncedItem {
  const { connector, resource } = target;
  const collection = resourceCollection(connector, resource);
  const itemId = syncedItemId(connector.provider, connector.providerAccountScope, target.resourceId, doc.id);
  const instructions = effectiveInstructions(resource.customInstructions, connector.customInstructions);
  const metadata: Record<string, MetadataValue> = {
    ...metadataValues(resource.metadata),
    ...metadataValues(doc.metadata),
    connector_id: target.connectorId,
    provider: connector.provider,
    ...(instructions !== null ? { custom_instructions: instructions } : {}),
  };
  const additionalMetadata: Record<string, unknown> = {
    ...(resource.additionalMetadata ?? {}),
    ...doc.filterableFields,
    connector_id: target.connectorId,
    resource_id: target.resourceId,
  };
  const source: SyncedItemSource = {
    connectorId: target.connectorId,
    resourceId: target.resourceId,
    externalId: doc.id,
    contentHash: doc.contentHash,
    // With capture turned off the connector's resources' rules alone decide: a document's own permission is dropped.
    ...(doc.permission && connector.captureEnabled ? { permission: doc.permission } : {}),
  };
  const text = doc.content.kind === 'text';
  return {
    externalId: doc.id,
    itemId,
    itemKey: itemKey(collection, SYNCED_STORE, itemId),
    payload: doc.content.kind === 'text' ? doc.content.text : Buffer.from(doc.content.bytes),
    data: {
      databaseId: connector.databaseId,
      itemKey: itemKey(collection, SYNCED_STORE, itemId),
      collection,
      store: SYNCED_STORE,
      itemId,
      kind: 'app',
      title: doc.title ? [...doc.title].slice(0, LIMITS.titleChars).join('') : null,
      content: { contentType: text ? 'text/plain' : doc.content.kind === 'bytes' ? doc.content.mimeType : 'application/octet-stream' },
      pairs: false,
      isMarkdown: false,
      infer: false,
      customInstructions: instructions,
      userName: null,
      expiresAt: null,
      metadata,
      additionalMetadata,
      relations: [],
      appKind: resource.resourceType,
      appProvider: connector.provider,
      sourceType: `app:${connector.provider}`,
      connector: source,
    },
  };
}
