import type { PermissionCapture, StoredAcl } from '@crs/domain/connectors/access-precedence';
import type { ProviderError } from './provider-errors';

/**
 * The port every connector provider implements (docs/connectors.md, "Provider port"). No framework here: a provider is
 * plain TypeScript that talks to its source; the scheduler, the event log and the HTTP routes sit above it.
 *
 * A provider keeps no state between calls. Each call gets the connector's credentials in its context, and a sync gets
 * the cursor the caller saved from an earlier `checkpoint` event. Every failure is a `ProviderError`
 * (provider-errors.ts), thrown from the call or from the iterator; a failure that concerns one document only is
 * yielded as a `failure` event and the sync goes on.
 */

/** Provider-specific credentials, as stored on the connector (`credentials` in the spec). */
export type Credentials = Readonly<Record<string, unknown>>;

export interface ProviderContext {
  credentials: Credentials;
  /** Aborting stops the call at its next page boundary: the iterator throws the signal's reason. */
  signal?: AbortSignal;
}

export interface CredentialField {
  name: string;
  description: string;
  required: boolean;
  /** Secret fields are never echoed back by the API. */
  secret: boolean;
}

export interface FilterableField {
  /** The key under a synced item's `additional_metadata`. */
  name: string;
  type: 'string' | 'number' | 'boolean' | 'date' | 'any';
  description: string;
}

export interface ResourceOption {
  name: string;
  description: string;
}

/** What `GET /connectors/providers?id=` describes. */
export interface ProviderDescription {
  id: string;
  name: string;
  credentialFields: CredentialField[];
  /** Provider-generated `additional_metadata` keys a query can filter on. */
  filterableFields: FilterableField[];
  /** Settings a resource may carry under `options` (column mappings, page sizes). */
  resourceOptions: ResourceOption[];
  /** Whether `capturePermissions` can return anything (rule 11); false: per-resource `acl` rules only. */
  capturesPermissions: boolean;
}

/** Who the credentials are, once validated. */
export interface AccountIdentity {
  /** A stable name of the external account; a sensible `provider_account_scope`. */
  accountScope: string;
  displayName: string;
  /** Things a person should know but that do not stop the connector (a role with more rights than it needs). */
  warnings: string[];
}

/** One thing the credentials can reach. */
export interface DiscoveredResource {
  resourceId: string;
  resourceType: string;
  name: string;
  /** Provider-specific facts that help configure it (columns, keys, a row estimate). */
  details: Record<string, unknown>;
}

/** A resource as configured on the connector (the spec's resource fields the provider needs). */
export interface ResourceConfig {
  resourceId: string;
  resourceType: string;
  name: string;
  /** Provider-specific settings, described by `ProviderDescription.resourceOptions`; absent: the provider's defaults. */
  options?: Readonly<Record<string, unknown>>;
}

export type DocumentContent = { kind: 'text'; text: string } | { kind: 'bytes'; bytes: Uint8Array; mimeType: string };

export interface SyncedDocument {
  /** The document's id within its resource, stable across syncs. */
  id: string;
  title: string;
  content: DocumentContent;
  /** When the source last changed it, as an ISO 8601 string; null when the source does not say. */
  updatedAt: string | null;
  /**
   * Changes whenever anything the document is made of changes, and only then: a caller that kept the hash it stored
   * can skip an unchanged document, and `listExistingIds` reports the same hash for the same content.
   */
  contentHash: string;
  /** Provider facts about the document, kept with it. */
  metadata: Record<string, unknown>;
  /** Provider-generated `additional_metadata`, keyed as `ProviderDescription.filterableFields` says. */
  filterableFields: Record<string, string | number | boolean | null>;
  /** The per-document permission, when the provider captures one (rule 12: it wins over everything). */
  permission?: PermissionCapture;
}

/** An opaque sync position, written by the provider, saved by the caller, given back as it was. */
export type SyncCursor = string;

export type SyncEvent =
  | { kind: 'upsert'; doc: SyncedDocument }
  | { kind: 'delete'; id: string }
  | { kind: 'failure'; id: string; error: ProviderError }
  /**
   * This document's per-document permission changed and nothing else (a drive's changes feed, a wiki's restriction
   * sweep): applied to the live item without re-reading or re-ingesting its content; ignored for an id not held.
   */
  | { kind: 'permission'; id: string; permission: PermissionCapture }
  /** Every event before this one is part of the position; saving it and resuming from it loses and repeats nothing. */
  | { kind: 'checkpoint'; cursor: SyncCursor };

/** One document that still exists at the source, for pruning and for finding changes the cursor cannot see. */
export interface ExistingDocument {
  id: string;
  /** The `contentHash` a sync would give it now; absent when the provider cannot tell without fetching it. */
  contentHash?: string;
}

/** The resource-level permission a provider captured (rule 11); `status: 'off'` for providers that capture none. */
export type ResourcePermission = Exclude<PermissionCapture, { status: 'failed' }>;

export interface ConnectorProvider {
  readonly description: ProviderDescription;

  /** Checks the credentials reach the source; throws AuthError, ConfigurationError or TransientError when not. */
  validateCredentials(ctx: ProviderContext): Promise<AccountIdentity>;

  discoverResources(ctx: ProviderContext): Promise<DiscoveredResource[]>;

  /**
   * Everything that changed in the resource since `cursor` (null: from the beginning). Yields a `checkpoint` after
   * each page; the last event of a complete sync is a checkpoint. Deletions a provider cannot see in its change
   * feed are found by pruning against `listExistingIds`.
   */
  sync(ctx: ProviderContext, resource: ResourceConfig, cursor: SyncCursor | null): AsyncIterable<SyncEvent>;

  /** Every document of the resource that exists now. */
  listExistingIds(ctx: ProviderContext, resource: ResourceConfig): AsyncIterable<ExistingDocument>;

  /**
   * The current state of the given documents: an `upsert` for each that exists, a `delete` for each that does not.
   * Providers whose listing carries content hashes implement it, so a caller can re-read what changed behind the
   * cursor's back.
   */
  fetchDocuments?(ctx: ProviderContext, resource: ResourceConfig, ids: readonly string[]): AsyncIterable<SyncEvent>;

  /** The resource-level verdict (rule 11); throws a ProviderError when the capture fails. */
  capturePermissions(ctx: ProviderContext, resource: ResourceConfig): Promise<ResourcePermission>;
}

export type { PermissionCapture, StoredAcl };
