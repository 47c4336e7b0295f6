import type { PermissionCapture } from '@crs/domain/connectors/access-precedence';
import { NO_COUNTS, type SyncCounts } from '@crs/domain/connectors/connector.events';
import { decideDatabase, evolveDatabase, initialDatabase, type DatabaseCommand, type DatabaseState } from '@crs/domain/database.decider';
import type { DatabaseEvent } from '@crs/domain/events';
import { decideItem } from '@crs/domain/items/item.decider';
import type { ItemEvent, ItemIngested } from '@crs/domain/items/item.events';
import { syncedFingerprint } from '@crs/domain/items/synced-item';
import { streams } from '@crs/domain/streams';
import type { SyncEvent } from '@crs/connectors/provider.port';
import { handleCommand, type CommandContext } from '@crs/eventstore/command-handling';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { decideOnItems, loadItemStates, type ItemDecision, type ItemStateCache } from '@crs/eventstore/item-stream';
import type { BlobStore } from '@crs/persistence/blob-store';
import { SYNCED_STORE, syncedItem, type DocumentTarget, type SyncedItem } from './synced-documents';

/** Blob writes of one page in flight at once. */

/** An item of the resource by its keys. */
export interface ItemRef {
  itemKey: string;
  itemId: string;
  collection: string;
}

/** What one page writes: new versions, permission-only changes (`permission` events) and deletions. */
interface ItemWrites {
  upserts: SyncedItem[];
  permissions: (ItemRef & { permission: PermissionCapture | null })[];
  deletes: ItemRef[];
}

export interface SyncedItemWriterDeps {
  store: EventStore;
  blobs: BlobStore;
  /** woken after item appends (the indexing pipeline) */
  pipeline: { wake(): void };
}

/**
 * What one resource's sync writes to the items of its database (docs/connectors.md, "Sync engine"): pages of
 * provider events become item events, content stored before the events that name it, and what each external id
 * became is remembered for pruning (`crawled`).
 */
export class SyncedItemWriter {
  private readonly collections = new Set<string>();
  /** what the writes did to each external id: the content hash an upsert carried, or null for a delete */
  readonly crawled = new Map<string, string | null>();

  /** `beforeWrite` runs before each write and throws to stop it (the sync is no longer current). */
  constructor(
    private readonly deps: SyncedItemWriterDeps,
    private readonly target: DocumentTarget,
    private readonly ctx: () => CommandContext,
    private readonly beforeWrite: () => Promise<void>,
  ) {}

  /** Deletes these items (those still live); counts them. */
  async deleteItems(items: ItemRef[]): Promise<SyncCounts> {
    await this.beforeWrite();
    return this.writeItems({ upserts: [], permissions: [], deletes: items });
  }

  /**
   * One page: every upsert whose item does not already say the same becomes an `ItemIngested` (content stored first),
   * or a `ProviderPermissionChanged` when only its per-document permission differs; every `permission` event for a
   * live item whose permission differs a `ProviderPermissionChanged`; every delete of a live item an `ItemDeleted`; all
   * in one multi-stream append with an expected revision per item stream. A document the page repeats counts once, as
   * its last event says (a `permission` after an upsert of the same page amends that upsert).
   */
  async applyPage(events: SyncEvent[]): Promise<SyncCounts> {
    let failed = 0;
    const last = new Map<string, SyncEvent>();
    for (const e of events) {
      if (e.kind === 'failure') failed++;
      else if (e.kind === 'upsert') last.set(e.doc.id, e);
      else if (e.kind === 'delete') last.set(e.id, e);
      else if (e.kind === 'permission' && this.target.connector.captureEnabled) {
        const before = last.get(e.id);
        if (before?.kind === 'upsert') last.set(e.id, { kind: 'upsert', doc: { ...before.doc, permission: e.permission } });
        else if (before?.kind !== 'delete') last.set(e.id, e);
      }
    }
    if (!last.size) return { ...NO_COUNTS, failed };
    await this.beforeWrite();
    const writes: ItemWrites = { upserts: [], permissions: [], deletes: [] };
    for (const [id, e] of last) {
      if (e.kind === 'upsert') {
        writes.upserts.push(syncedItem(this.target, e.doc));
        this.crawled.set(id, e.doc.contentHash);
      } else if (e.kind === 'permission') {
        writes.permissions.push({ ...this.itemOf(id), permission: e.permission });
      } else {
        writes.deletes.push(this.itemOf(id));
        this.crawled.set(id, null);
      }
    }
    return { ...(await this.writeItems(writes)), failed };
  }

  /** The item a document of this resource is (or would be), by its external id. */
  private itemOf(externalId: string): ItemRef {
    const item = syncedItem(this.target, { id: externalId, title: '', content: { kind: 'text', text: '' }, updatedAt: null, contentHash: '', metadata: {}, filterableFields: {} });
    return { itemKey: item.itemKey, itemId: item.itemId, collection: item.data.collection };
  }

  /**
   * Writes upserts, permission-only changes and deletions of items of this resource's database; counts what changed.
   * An upsert whose item already holds the same version (same fingerprint) but another per-document permission is a
   * permission-only change: no content is stored and nothing is indexed again.
   */
  private async writeItems({ upserts, permissions, deletes }: ItemWrites): Promise<SyncCounts> {
    const { store } = this.deps;
    const databaseId = this.target.connector.databaseId;
    const cache: ItemStateCache = new Map();
    const states = await loadItemStates(store, [...upserts, ...permissions, ...deletes].map((u) => ({ databaseId, itemKey: u.itemKey })), cache);
    const stateOf = (key: string) => states.get(streams.item(databaseId, key));
    const changed: SyncedItem[] = [];
    const permissionOnly: (ItemRef & { permission: PermissionCapture | null })[] = [...permissions];
    for (const u of upserts) {
      const state = stateOf(u.itemKey);
      if (!(state?.live && state.synced?.fingerprint === syncedFingerprint(u.data))) changed.push(u);
      else permissionOnly.push({ itemKey: u.itemKey, itemId: u.itemId, collection: u.data.collection, permission: u.data.connector?.permission ?? null });
    }
    for (const collection of new Set(changed.map((u) => u.data.collection))) await this.ensureCollection(collection);
    const events = await this.storePayloads(changed);
    const ctx = { ...this.ctx(), databaseId };
    type State = Parameters<ItemDecision['decide']>[0];
    const ids = (r: ItemRef) => ({ databaseId, itemKey: r.itemKey, itemId: r.itemId, collection: r.collection, store: SYNCED_STORE });
    const decisions: ItemDecision[] = [
      ...events.map((event) => ({ ctx, databaseId, itemKey: event.data.itemKey, decide: (state: State) => decideItem({ type: 'SyncDocument', event }, state) })),
      ...permissionOnly.map((p) => ({ ctx, databaseId, itemKey: p.itemKey, decide: (state: State) => decideItem({ type: 'SyncPermission', ids: ids(p), permission: p.permission }, state) })),
      ...deletes.map((d) => ({ ctx, databaseId, itemKey: d.itemKey, decide: (state: State): ItemEvent[] => (state.live ? [{ type: 'ItemDeleted', data: ids(d) }] : []) })),
    ];
    const counts: SyncCounts = { ...NO_COUNTS, unchanged: upserts.length - changed.length - (permissionOnly.length - permissions.length) };
    if (!decisions.length) return counts;
    const outcomes = await decideOnItems(store, decisions, cache);
    outcomes.forEach((o, i) => {
      if (!o.events) throw o.error;
      const wrote = o.events.length > 0;
      if (i < events.length) wrote ? counts.upserted++ : counts.unchanged++;
      else if (i < events.length + permissionOnly.length) {
        if (wrote) counts.permissions = (counts.permissions ?? 0) + 1;
        else if (i >= events.length + permissions.length) counts.unchanged++;
      } else if (wrote) counts.deleted++;
    });
    if (counts.upserted || counts.deleted) this.deps.pipeline.wake();
    return counts;
  }

  /** Every payload of the page stored at once (the small ones in one statement); a failure fails the page, as one put's did. */
  private async storePayloads(items: SyncedItem[]): Promise<ItemIngested[]> {
    const stored = await this.deps.blobs.putMany(items.map((item) => ({ databaseId: this.target.connector.databaseId, bytes: item.payload })));
    return items.map((item, i) => {
      const outcome = stored[i];
      if ('error' in outcome) throw outcome.error;
      const bytes = typeof item.payload === 'string' ? Buffer.byteLength(item.payload) : item.payload.length;
      return { type: 'ItemIngested', data: { ...item.data, content: { ...item.data.content, sha256: outcome.sha256, bytes } } };
    });
  }

  /** The collection documents go to exists (as an ingest makes it exist); a collection being deleted refuses. */
  private async ensureCollection(collection: string): Promise<void> {
    if (this.collections.has(collection)) return;
    const databaseId = this.target.connector.databaseId;
    await handleCommand<DatabaseState, DatabaseEvent, DatabaseCommand>(
      this.deps.store,
      streams.database(databaseId),
      { initial: initialDatabase, evolve: evolveDatabase },
      decideDatabase,
      { type: 'EnsureCollection', databaseId, collection },
      { ...this.ctx(), databaseId },
    );
    this.collections.add(collection);
  }
}
