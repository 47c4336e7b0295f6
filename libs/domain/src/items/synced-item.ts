import { createHash } from 'node:crypto';
import type { PermissionCapture } from '../connectors/access-precedence';
import type { ItemIngested } from './item.events';

/**
 * What a sync compares to tell whether a synced document's version changed: every field of its `ItemIngested` that
 * the document, its resource and its connector decide, with the provider's `contentHash` standing for the content
 * (the blob's own hash and size follow from it), but not the per-document permission. Equal fingerprints and equal
 * permissions: the item already says what a new `ItemIngested` would, so the sync appends nothing; equal fingerprints
 * and another permission: only the permission changed (`ProviderPermissionChanged`, no new version).
 */
export function syncedFingerprint(data: Omit<ItemIngested['data'], 'content'> & { content: { contentType: string; filename?: string } }): string {
  // The document's own rule is left out: the source never sets it (a metadata `acl` edit does, and SyncDocument carries
  // it into each new version), so it says nothing about whether the source changed.
  const { content, databaseId: _d, itemKey: _k, acl: _acl, connector, ...rest } = data;
  const source = connector ? { ...connector, permission: undefined } : undefined;
  return createHash('sha256')
    .update(canonicalJson({ ...rest, connector: source, contentType: content.contentType, filename: content.filename ?? null }))
    .digest('hex');
}

/**
 * Whether two per-document permissions say the same. Absent, `null` and a capture of no permission (`acl` null, no
 * unresolved members) all say that the document has no permission of its own.
 */
export function samePermission(a: PermissionCapture | null | undefined, b: PermissionCapture | null | undefined): boolean {
  return canonicalJson(meaningOf(a)) === canonicalJson(meaningOf(b));
}

function meaningOf(p: PermissionCapture | null | undefined): PermissionCapture | null {
  if (!p || (p.status === 'captured' && p.acl === null && !p.unresolved)) return null;
  return p;
}

/** What an item's stream says about the document it was synced from (set while its current version was synced). */
export interface SyncedItemState {
  connectorId: string;
  resourceId: string;
  externalId: string;
  contentHash: string;
  fingerprint: string;
  /** the per-document permission in force: the version's, or the last `ProviderPermissionChanged` since */
  permission?: PermissionCapture;
}

export function syncedItemState(data: ItemIngested['data']): SyncedItemState | undefined {
  const source = data.connector;
  if (!source) return undefined;
  return {
    connectorId: source.connectorId,
    resourceId: source.resourceId,
    externalId: source.externalId,
    contentHash: source.contentHash,
    fingerprint: syncedFingerprint(data),
    ...(source.permission ? { permission: source.permission } : {}),
  };
}

/** JSON with object keys sorted at every level (undefined members left out), so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
