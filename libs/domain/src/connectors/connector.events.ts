import type { StoredAcl } from './access-precedence';

/**
 * Connector events (docs/connectors.md, "Model").
 *
 * Streams (streams.ts):
 *   connector-<connectorId>                               ConnectorCreated, ConnectorSettingsChanged,
 *                                                         ConnectorCredentialsRotated, ConnectorPaused, ConnectorResumed,
 *                                                         ConnectorDeletionRequested, ConnectorDeleted
 *   connector-resource-<connectorId>-<sha256(resourceId)> ResourceConfigured, ResourceReplaced, ResourceSettingsChanged,
 *                                                         ResourceRemoved, SyncStarted, SyncCheckpointRecorded,
 *                                                         SyncLeaseRenewed, PermissionsCaptured, SyncCompleted,
 *                                                         SyncDeferred, SyncFailed
 *
 * Credentials never enter the log: ConnectorCreated and ConnectorCredentialsRotated carry the id of the sealed
 * credentials row (table connector_credentials) only. Every ACL here is in stored form (`normalizeDocumentAcl`).
 */

/** What happens to the synced documents when a connector or a resource goes. */
export type ContentPolicy = 'delete' | 'keep';
export const CONTENT_POLICIES: readonly ContentPolicy[] = ['delete', 'keep'];
/** The policy when none is chosen: synced content is deleted, so nothing stays readable its rule no longer allows. */
export const DEFAULT_CONTENT_POLICY: ContentPolicy = 'delete';

// ---- connector stream -------------------------------------------------------------------------------------------

export interface ConnectorCreated {
  type: 'ConnectorCreated';
  data: {
    connectorId: string;
    provider: string;
    databaseId: string;
    /** the collection synced documents go to unless a resource routes them elsewhere */
    collection: string;
    credentialsId: string;
    /** null: none */
    customInstructions: string | null;
    syncIntervalSeconds: number;
    providerAccountScope: string;
    /** whether provider permissions are captured (rule 11: capture can be turned off) */
    captureEnabled: boolean;
  };
}

/** Only the settings that changed are present. `customInstructions` null: cleared (a PATCH sent ""). */
export interface ConnectorSettingsChanged {
  type: 'ConnectorSettingsChanged';
  data: { connectorId: string; syncIntervalSeconds?: number; customInstructions?: string | null; captureEnabled?: boolean };
}

/** New sealed credentials; the row of `previousCredentialsId` is deleted once this is applied. */
export interface ConnectorCredentialsRotated {
  type: 'ConnectorCredentialsRotated';
  data: { connectorId: string; credentialsId: string; previousCredentialsId: string };
}

export interface ConnectorPaused {
  type: 'ConnectorPaused';
  data: { connectorId: string };
}

export interface ConnectorResumed {
  type: 'ConnectorResumed';
  data: { connectorId: string };
}

/** Delete accepted: nothing of the connector is served from here on; the removal of its content follows. */
export interface ConnectorDeletionRequested {
  type: 'ConnectorDeletionRequested';
  data: { connectorId: string; contentPolicy: ContentPolicy };
}

/** The connector's content was handled per its policy and its credentials row deleted. */
export interface ConnectorDeleted {
  type: 'ConnectorDeleted';
  data: { connectorId: string; contentPolicy: ContentPolicy };
}

export type ConnectorStreamEvent =
  | ConnectorCreated
  | ConnectorSettingsChanged
  | ConnectorCredentialsRotated
  | ConnectorPaused
  | ConnectorResumed
  | ConnectorDeletionRequested
  | ConnectorDeleted;

// ---- resource stream --------------------------------------------------------------------------------------------

/** A resource's settings as they stand after an event. */
export interface ResourceSettings {
  resourceType: string;
  name: string;
  /** null: the connector's collection */
  collection: string | null;
  /** schema-declared attributes written on every synced document */
  metadata: Record<string, unknown> | null;
  /** free-form fields written on every synced document (provider fields and connector_id, resource_id win) */
  additionalMetadata: Record<string, unknown> | null;
  /** provider resource options (docs/connectors.md, per provider) */
  options: Record<string, unknown> | null;
  /** the rule set through the API, stored form; null: none was ever set */
  acl: string[] | null;
  /** null: inherits the connector's */
  customInstructions: string | null;
}

interface ResourceIds {
  connectorId: string;
  resourceId: string;
}

/**
 * The resource was added (`generation` 1, or the next one after a removal) or configured again (same generation:
 * cursor, instructions and access rule kept unless sent).
 */
export interface ResourceConfigured {
  type: 'ResourceConfigured';
  data: ResourceIds & { generation: number; settings: ResourceSettings };
}

/** The whole resource was replaced: a new generation, cursor cleared, the next sync starts from the beginning. */
export interface ResourceReplaced {
  type: 'ResourceReplaced';
  data: ResourceIds & { generation: number; settings: ResourceSettings };
}

/** Only what changed is present. `customInstructions` null: cleared (back to the connector's). */
export interface ResourceSettingsChanged {
  type: 'ResourceSettingsChanged';
  data: ResourceIds & { customInstructions?: string | null; acl?: string[]; previousAcl?: string[] | null };
}

/** Syncing stopped; the synced documents are deleted (`delete`) or kept as ordinary items (`keep`). */
export interface ResourceRemoved {
  type: 'ResourceRemoved';
  data: ResourceIds & { generation: number; contentPolicy: ContentPolicy };
}

export type SyncTrigger = 'scheduled' | 'manual' | 'initial';
export const SYNC_TRIGGERS: readonly SyncTrigger[] = ['scheduled', 'manual', 'initial'];

export interface SyncStarted {
  type: 'SyncStarted';
  data: ResourceIds & {
    syncId: string;
    generation: number;
    trigger: SyncTrigger;
    /** the position the sync starts from; null: the beginning */
    cursor: string | null;
    startedAt: string;
    leaseExpiresAt: string;
    /** a sync whose lease had expired, taken over by this one */
    supersedes?: string;
  };
}

/** Documents handled since the previous checkpoint of the same sync (per checkpoint, not running totals). */
export interface SyncCounts {
  upserted: number;
  unchanged: number;
  deleted: number;
  /** documents that could not be synced (a provider `failure` event); the rest went on */
  failed: number;
  /** documents whose per-document permission alone changed (no new version); absent: none */
  permissions?: number;
}
export const NO_COUNTS: SyncCounts = { upserted: 0, unchanged: 0, deleted: 0, failed: 0 };

/** Two counts added up (`permissions` left out while both have none, as older events do). */
export function addCounts(a: SyncCounts, b: SyncCounts): SyncCounts {
  const permissions = (a.permissions ?? 0) + (b.permissions ?? 0);
  return { upserted: a.upserted + b.upserted, unchanged: a.unchanged + b.unchanged, deleted: a.deleted + b.deleted, failed: a.failed + b.failed, ...(permissions ? { permissions } : {}) };
}

/** The cursor moved: every effect up to `cursor` is committed. Renews the sync's lease. */
export interface SyncCheckpointRecorded {
  type: 'SyncCheckpointRecorded';
  data: ResourceIds & { syncId: string; generation: number; cursor: string; counts: SyncCounts; leaseExpiresAt: string };
}

/**
 * The running sync is alive between checkpoints (a long page, a slow source): its lease now runs until
 * `leaseExpiresAt`, so no other process takes the resource over while it works.
 */
export interface SyncLeaseRenewed {
  type: 'SyncLeaseRenewed';
  data: ResourceIds & { syncId: string; generation: number; leaseExpiresAt: string };
}

/** The resource-level permission verdict of a sync (rule 11); recorded when it differs from the current one. */
export type PermissionVerdict = { status: 'captured'; acl: StoredAcl | null; unresolved?: number } | { status: 'off' } | { status: 'failed'; message: string };

export interface PermissionsCaptured {
  type: 'PermissionsCaptured';
  data: ResourceIds & { syncId: string; generation: number; verdict: PermissionVerdict };
}

/** The sync reached the end; `counts` are the sync's totals. */
export interface SyncCompleted {
  type: 'SyncCompleted';
  data: ResourceIds & { syncId: string; generation: number; cursor: string | null; counts: SyncCounts };
}

/**
 * The sync stopped without failing and resumes from its last checkpoint at `retryAt`: the provider's Retry-After was
 * too long to hold the lease (`rate_limited`), or the worker stopped (`stopped`: shutdown, pause).
 */
export type SyncDeferralReason = 'rate_limited' | 'stopped';
export interface SyncDeferred {
  type: 'SyncDeferred';
  data: ResourceIds & { syncId: string; generation: number; retryAt: string; reason: SyncDeferralReason };
}

/** The provider error kinds a sync fails with (libs/connectors provider errors), and `internal` for ours. */
export type SyncFailureKind = 'auth' | 'scope' | 'transient' | 'resource_gone' | 'configuration' | 'internal';
export const SYNC_FAILURE_KINDS: readonly SyncFailureKind[] = ['auth', 'scope', 'transient', 'resource_gone', 'configuration', 'internal'];

export interface SyncFailed {
  type: 'SyncFailed';
  data: ResourceIds & {
    syncId: string;
    generation: number;
    kind: SyncFailureKind;
    message: string;
    /** failures in a row since the last completed sync, this one included */
    consecutiveFailures: number;
  };
}

export type ResourceEvent =
  | ResourceConfigured
  | ResourceReplaced
  | ResourceSettingsChanged
  | ResourceRemoved
  | SyncStarted
  | SyncCheckpointRecorded
  | SyncLeaseRenewed
  | PermissionsCaptured
  | SyncCompleted
  | SyncDeferred
  | SyncFailed;

export type ConnectorEvent = ConnectorStreamEvent | ResourceEvent;
export type ConnectorEventType = ConnectorEvent['type'];

export const CONNECTOR_STREAM_EVENT_TYPES = [
  'ConnectorCreated',
  'ConnectorSettingsChanged',
  'ConnectorCredentialsRotated',
  'ConnectorPaused',
  'ConnectorResumed',
  'ConnectorDeletionRequested',
  'ConnectorDeleted',
] as const satisfies readonly ConnectorStreamEvent['type'][];

export const RESOURCE_EVENT_TYPES = [
  'ResourceConfigured',
  'ResourceReplaced',
  'ResourceSettingsChanged',
  'ResourceRemoved',
  'SyncStarted',
  'SyncCheckpointRecorded',
  'SyncLeaseRenewed',
  'PermissionsCaptured',
  'SyncCompleted',
  'SyncDeferred',
  'SyncFailed',
] as const satisfies readonly ResourceEvent['type'][];

/** Every connector event type, both streams. */
export const CONNECTOR_EVENT_TYPES = [...CONNECTOR_STREAM_EVENT_TYPES, ...RESOURCE_EVENT_TYPES] as const;

// Every event type is listed: a type missing from the lists above fails to compile here.
type Unlisted = Exclude<ConnectorEventType, (typeof CONNECTOR_EVENT_TYPES)[number]>;
const everyTypeListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyTypeListed;

export const isConnectorEvent = (event: { type: string }): event is ConnectorEvent => (CONNECTOR_EVENT_TYPES as readonly string[]).includes(event.type);
