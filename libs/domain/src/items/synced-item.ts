import { createHash } from 'node:crypto';
import type { ItemIngested } from './item.events';

/**
 * What a sync compares to tell whether a synced document changed: every field of its `ItemIngested` that the
 * document, its resource and its connector decide, with the provider's `contentHash` standing for the content (the
 * blob's own hash and size follow from it). Equal fingerprints: the item already says what a new `ItemIngested` would,
 * so the sync appends nothing.
 */
export function syncedFingerprint(data: Omit<ItemIngested['data'], 'content'> & { content: { contentType: string; filename?: string } }): string {
  // The document's own rule is left out: the source never sets it (a metadata `acl` edit does, and SyncDocument carries
  // it into each new version), so it says nothing about whether the source changed.
  const { content, databaseId: _d, itemKey: _k, acl: _acl, ...rest } = data;
  return createHash('sha256')
    .update(canonicalJson({ ...rest, contentType: content.contentType, filename: content.filename ?? null }))
    .digest('hex');
}

/** What an item's stream says about the document it was synced from (set while its current version was synced). */
export interface SyncedItemState {
  connectorId: string;
  resourceId: string;
  externalId: string;
  contentHash: string;
  fingerprint: string;
}

export function syncedItemState(data: ItemIngested['data']): SyncedItemState | undefined {
  const source = data.connector;
  if (!source) return undefined;
  return { connectorId: source.connectorId, resourceId: source.resourceId, externalId: source.externalId, contentHash: source.contentHash, fingerprint: syncedFingerprint(data) };
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
