import { randomUUID } from 'node:crypto';
import type { ConnectorSettings } from '@crs/domain/connectors/connector.decider';
import { syncAllowed } from '@crs/domain/connectors/connector.decider';
import { addCounts, NO_COUNTS, type PermissionVerdict, type ResourceSettings, type SyncCounts, type SyncFailureKind, type SyncTrigger } from '@crs/domain/connectors/connector.events';
import type { ConnectorCredentialVault } from '@crs/connectors/credential-vault';
import { isProviderError, RateLimitedError } from '@crs/connectors/provider-errors';
import type { ProviderRegistry } from '@crs/connectors/provider-registry';
import type { ConnectorProvider, ExistingDocument, ProviderContext, ResourceConfig, SyncEvent } from '@crs/connectors/provider.port';
import { reconcile } from '@crs/connectors/reconcile';
import type { CommandContext } from '@crs/eventstore/command-handling';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { type BlobStore, DatabaseBlobsDeletedError } from '@crs/persistence/blob-store';
import type { Sql } from '@crs/persistence/data-source';
import type { RunnerLogger } from '@crs/persistence/projection-runner';
import { findConnectorResource } from '@crs/projections/connectors/connectors.queries';
import { syncedItems } from '@crs/projections/items/items.queries';
import { isDomainError, loadConnector, ResourceStream } from './connector-streams';
import type { ConnectorLeases } from './connector-leases';
import type { PruneHolds } from './prune-holds';
import { failureKind, failureMessage } from './sync-failures';
import { SyncedItemWriter } from './synced-item-writer';

export type Clock = () => Date;

export interface ResourceSyncDeps {
  sql: Sql;
  store: EventStore;
  blobs: BlobStore;
  providers: ProviderRegistry;
  credentials: ConnectorCredentialVault;
  holds: PruneHolds;
  /** one sync per connector across processes; absent: only the resource leases of the log (a single process) */
  leases?: ConnectorLeases;
  /** woken after item appends (the indexing pipeline) */
  pipeline: { wake(): void };
  log: RunnerLogger;
  clock: Clock;
  /**
   * `leaseMs`: how long a sync's lease runs from its start, each checkpoint and each heartbeat. `heartbeatMs` (default
   * a third of the lease): how long a sync may go without renewing it (no checkpoint) before it renews it anyway.
   */
  settings: { leaseMs: number; massDeletionThreshold: number; heartbeatMs?: number };
}

export interface SyncJob {
  orgId: string;
  connectorId: string;
  resourceId: string;
  trigger: SyncTrigger;
  /** aborting stops the sync at its next page boundary; it is recorded as deferred (`stopped`) */
  signal?: AbortSignal;
}

export type SyncResult =
  | { kind: 'completed'; syncId: string; counts: SyncCounts; pruneHeld: boolean }
  | { kind: 'deferred'; syncId: string; retryAt: string; reason: 'rate_limited' | 'stopped' }
  | { kind: 'failed'; syncId: string; failure: SyncFailureKind; message: string }
  /** not started: not allowed (paused, deleting), running elsewhere, or the resource is gone */
  | { kind: 'skipped'; reason: string }
  /** stopped without recording: another sync took the resource over, it was replaced or removed, or the connector is being deleted */
  | { kind: 'stale'; syncId: string; reason: string };

/** Thrown inside a sync to stop it without recording anything more. */
class StopSync extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Item appends per multi-stream append when pruning or deleting. */
const DELETE_BATCH = 500;
/** Item streams read per query when loading what a resource holds. */
const LOAD_BATCH = 2000;

/** What the service holds of one external document of the resource. */
interface KnownDocument {
  contentHash: string;
  itemKey: string;
  itemId: string;
  collection: string;
  databaseId: string;
}

/**
 * One resource's sync (docs/connectors.md, "Sync engine"): start it on the resource stream with a lease, capture the
 * resource's permissions, list what exists at the source, crawl from the cursor committing each page's items and then
 * the checkpoint, prune what the listing no longer has (behind the mass-deletion guard) and re-read what changed
 * behind the cursor, and complete. Provider errors end it as the status rules say: a rate limit defers it, the rest
 * fail it with their kind.
 */
export class ResourceSync {
  constructor(private readonly deps: ResourceSyncDeps) {}

  async run(job: SyncJob): Promise<SyncResult> {
    const { store, clock } = this.deps;
    const ctx = (): CommandContext => ({ orgId: job.orgId, actor: 'system:connector-sync', now: clock() });
    const connectorState = await loadConnector(store, job.connectorId);
    if (!syncAllowed(connectorState, job.trigger)) return { kind: 'skipped', reason: connectorState.phase === 'live' ? 'the connector is paused' : 'the connector is not live' };
    const connector = connectorState.settings!;
    const stream = new ResourceStream(store, job.connectorId, job.resourceId);
    const syncId = randomUUID();
    const { leases } = this.deps;
    if (leases && !(await leases.acquire(job.connectorId, syncId, new Date(this.leaseEnd()), clock()))) {
      const until = await leases.heldUntil(job.connectorId);
      return { kind: 'skipped', reason: `another sync of connector '${job.connectorId}' is running${until ? ` (its lease runs until ${until.toISOString()})` : ''}` };
    }
    try {
      const now = clock();
      await stream.decide(ctx(), { type: 'StartSync', connectorId: job.connectorId, resourceId: job.resourceId, syncId, trigger: job.trigger, now: now.toISOString(), leaseExpiresAt: this.leaseEnd() });
    } catch (err) {
      await leases?.release(job.connectorId, syncId);
      if (isDomainError(err, 'SYNC_RUNNING', 'RESOURCE_NOT_FOUND')) return { kind: 'skipped', reason: err.message };
      throw err;
    }
    const started = stream.state!;
    const run = new RunningSync(this.deps, job, connector, started.settings!, started.generation, started.cursor, syncId, stream, ctx);
    return run.execute();
  }

  private leaseEnd(): string {
    return new Date(this.deps.clock().getTime() + this.deps.settings.leaseMs).toISOString();
  }
}

class RunningSync {
  private readonly resourceConfig: ResourceConfig;
  private readonly writer: SyncedItemWriter;
  /** when the lease was last renewed (performance.now()): started, checkpointed or renewed by the heartbeat */
  private renewedAt = performance.now();
  /** set when a lease renewal was refused: why the sync is no longer the resource's running one */
  private lost: string | null = null;

  constructor(
    private readonly deps: ResourceSyncDeps,
    private readonly job: SyncJob,
    private readonly connector: ConnectorSettings,
    resource: ResourceSettings,
    private readonly generation: number,
    private cursor: string | null,
    private readonly syncId: string,
    private readonly stream: ResourceStream,
    private readonly ctx: () => CommandContext,
  ) {
    const target = { connectorId: job.connectorId, resourceId: job.resourceId, connector, resource };
    this.writer = new SyncedItemWriter(deps, target, ctx, () => this.requireLiveConnector());
    this.resourceConfig = { resourceId: job.resourceId, resourceType: resource.resourceType, name: resource.name, ...(resource.options ? { options: resource.options } : {}) };
  }

  private get ref() {
    return { connectorId: this.job.connectorId, resourceId: this.job.resourceId, syncId: this.syncId, generation: this.generation };
  }

  private leaseEnd(): string {
    return new Date(this.deps.clock().getTime() + this.deps.settings.leaseMs).toISOString();
  }

  /**
   * Renews the lease while a page takes long (a slow source, a large document): every `heartbeatMs` without a lease
   * renewal, a `RenewLease`. A refusal means another sync took the resource over, or it was replaced or removed: the
   * crawl stops at its next page. Returns the function that stops the heartbeat.
   */
  private startHeartbeat(): () => void {
    const every = Math.max(50, this.deps.settings.heartbeatMs ?? Math.floor(this.deps.settings.leaseMs / 3));
    const timer = setInterval(() => {
      if (performance.now() - this.renewedAt < every || this.lost !== null) return;
      this.renewedAt = performance.now();
      this.renewLeases().catch((err) => {
        if (isDomainError(err, 'SYNC_NOT_CURRENT')) this.lost = err.message;
        else this.deps.log.error({ err: err instanceof Error ? err.message : String(err), connectorId: this.job.connectorId, resourceId: this.job.resourceId }, 'connector sync: renewing the lease failed');
      });
    }, Math.max(25, Math.floor(every / 2)));
    timer.unref();
    return () => clearInterval(timer);
  }

  /** The resource's lease in the log, and the connector's (when there is one to renew). */
  private async renewLeases(): Promise<void> {
    const until = this.leaseEnd();
    await this.stream.decide(this.ctx(), { type: 'RenewLease', ...this.ref, now: this.deps.clock().toISOString(), leaseExpiresAt: until });
    if (this.deps.leases && !(await this.deps.leases.renew(this.job.connectorId, this.syncId, new Date(until)))) {
      this.lost = `sync '${this.syncId}' lost its connector's lease to another sync`;
    }
  }

  async execute(): Promise<SyncResult> {
    const stopHeartbeat = this.startHeartbeat();
    try {
      return await this.crawl();
    } finally {
      stopHeartbeat();
      await this.deps.leases?.release(this.job.connectorId, this.syncId).catch(() => undefined);
    }
  }

  private async crawl(): Promise<SyncResult> {
    try {
      const provider = this.deps.providers.get(this.connector.provider);
      if (!provider) return await this.fail('configuration', `this service has no provider '${this.connector.provider}'; the connector cannot sync until it is deleted and created with a known provider`);
      const credentials = await this.deps.credentials.get(this.job.orgId, this.connector.credentialsId);
      if (!credentials) return await this.fail('auth', "the connector's credentials are missing; set new credentials on the connector to resume syncing");
      const pctx: ProviderContext = { credentials, ...(this.job.signal ? { signal: this.job.signal } : {}) };

      await this.capturePermissions(provider, pctx);
      // What the service holds and what the source lists, both taken before the crawl: a document the crawl adds
      // after the listing was taken is then neither known nor listed, and pruning leaves it alone.
      const known = await this.knownDocuments();
      const listing = await collect(provider.listExistingIds(pctx, this.resourceConfig), this.job.signal);

      let page: SyncEvent[] = [];
      for await (const event of provider.sync(pctx, this.resourceConfig, this.cursor)) {
        if (event.kind !== 'checkpoint') {
          page.push(event);
          continue;
        }
        const counts = await this.writer.applyPage(page);
        page = [];
        const until = this.leaseEnd();
        await this.stream.decide(this.ctx(), { type: 'RecordCheckpoint', ...this.ref, cursor: event.cursor, counts, leaseExpiresAt: until });
        if (this.deps.leases && !(await this.deps.leases.renew(this.job.connectorId, this.syncId, new Date(until)))) this.lost = `sync '${this.syncId}' lost its connector's lease to another sync`;
        this.renewedAt = performance.now();
        this.cursor = event.cursor;
      }
      // A provider ends a complete sync with a checkpoint; anything after the last one is applied (idempotent) but
      // moves no cursor.
      const tail = page.length ? await this.writer.applyPage(page) : NO_COUNTS;

      const pruned = await this.prune(provider, pctx, known, listing);
      const counts = addCounts(tail, pruned.counts);
      if (this.cursor !== null && (counts.upserted || counts.deleted || counts.failed || counts.unchanged)) {
        await this.stream.decide(this.ctx(), { type: 'RecordCheckpoint', ...this.ref, cursor: this.cursor, counts, leaseExpiresAt: this.leaseEnd() });
      }
      await this.stream.decide(this.ctx(), { type: 'CompleteSync', ...this.ref });
      const total = this.stream.state?.lastOutcome?.kind === 'completed' ? this.stream.state.lastOutcome.counts : counts;
      return { kind: 'completed', syncId: this.syncId, counts: total, pruneHeld: pruned.held };
    } catch (err) {
      return this.ended(err);
    }
  }

  /** How an error ends the sync: recorded as the status rules say, or not at all when the sync is no longer current. */
  private async ended(err: unknown): Promise<SyncResult> {
    if (err instanceof StopSync) return { kind: 'stale', syncId: this.syncId, reason: err.reason };
    if (isDomainError(err, 'SYNC_NOT_CURRENT')) return { kind: 'stale', syncId: this.syncId, reason: err.message };
    try {
      if (this.job.signal?.aborted) return await this.defer('stopped', this.deps.clock());
      if (err instanceof RateLimitedError) return await this.defer('rate_limited', err.retryAt);
      if (isProviderError(err)) return await this.fail(failureKind(err), failureMessage(err, this.connector.provider));
      if (err instanceof DatabaseBlobsDeletedError) return await this.fail('configuration', "the connector's database was deleted");
      if (isDomainError(err, 'COLLECTION_DELETING')) return await this.fail('configuration', err.message);
      this.deps.log.error({ err: err instanceof Error ? err.stack : String(err), connectorId: this.job.connectorId, resourceId: this.job.resourceId }, 'connector sync failed');
      return await this.fail('internal', `the sync stopped on an internal error: ${err instanceof Error ? err.message : String(err)}; it will be retried`);
    } catch (recordErr) {
      if (isDomainError(recordErr, 'SYNC_NOT_CURRENT')) return { kind: 'stale', syncId: this.syncId, reason: recordErr.message };
      throw recordErr;
    }
  }

  private async defer(reason: 'rate_limited' | 'stopped', retryAt: Date): Promise<SyncResult> {
    const at = retryAt.toISOString();
    await this.stream.decide(this.ctx(), { type: 'DeferSync', ...this.ref, retryAt: at, reason });
    return { kind: 'deferred', syncId: this.syncId, retryAt: at, reason };
  }

  private async fail(kind: SyncFailureKind, message: string): Promise<SyncResult> {
    await this.stream.decide(this.ctx(), { type: 'FailSync', ...this.ref, kind, message });
    return { kind: 'failed', syncId: this.syncId, failure: kind, message };
  }

  /**
   * The resource-level verdict, recorded before any document of this sync is written, so a document never shows
   * under an older, wider verdict than the source has now. A capture that fails records `failed`, which keeps the
   * last captured verdict (never wider); capture turned off, or a provider that captures none, records `off`.
   */
  private async capturePermissions(provider: ConnectorProvider, pctx: ProviderContext): Promise<void> {
    let verdict: PermissionVerdict;
    if (!this.connector.captureEnabled || !provider.description.capturesPermissions) verdict = { status: 'off' };
    else {
      try {
        const captured = await provider.capturePermissions(pctx, this.resourceConfig);
        verdict = captured.status === 'off' ? { status: 'off' } : { status: 'captured', acl: captured.acl, ...(captured.unresolved ? { unresolved: captured.unresolved } : {}) };
      } catch (err) {
        // A refusal of the credentials, a rate limit or a stop ends the sync as they would anywhere else.
        if (err instanceof RateLimitedError || (isProviderError(err) && err.kind === 'auth') || this.job.signal?.aborted) throw err;
        verdict = { status: 'failed', message: err instanceof Error ? err.message : String(err) };
      }
    }
    await this.stream.decide(this.ctx(), { type: 'RecordPermissions', ...this.ref, verdict });
  }

  /**
   * Stops the sync (without recording) once its connector is no longer live, or its resource was removed or replaced:
   * its content is being removed, or a new generation starts over. Checked before each write, so a removal's
   * processor and this sync do not race for long (the resource from the read model, which may lag a little).
   */
  private async requireLiveConnector(): Promise<void> {
    if (this.lost !== null) throw new StopSync(this.lost);
    const state = await loadConnector(this.deps.store, this.job.connectorId);
    if (state.phase !== 'live') throw new StopSync('the connector is being deleted');
    const row = await findConnectorResource(this.deps.sql, this.job.connectorId, this.job.resourceId);
    if (row && (row.generation > this.generation || (row.generation === this.generation && row.phase === 'removed'))) throw new StopSync('the resource was removed or replaced');
  }

  /**
   * Every live item this resource synced, by external id, with the content hash it was synced at: from the items read
   * model, one query per page. An item the read model has not caught up with yet is missed here, which is harmless: it
   * is not pruned this time, and a document re-read because its hash looked stale decides nothing when unchanged.
   */
  private async knownDocuments(): Promise<Map<string, KnownDocument>> {
    const known = new Map<string, KnownDocument>();
    let afterKey = '';
    for (;;) {
      const rows = await syncedItems(this.deps.sql, { connectorId: this.job.connectorId, resourceId: this.job.resourceId, limit: LOAD_BATCH, afterKey });
      if (!rows.length) return known;
      afterKey = rows[rows.length - 1].item_key;
      for (const r of rows) {
        if (r.external_id === null || r.source_content_hash === null) continue;
        known.set(r.external_id, { contentHash: r.source_content_hash, itemKey: r.item_key, itemId: r.item_id, collection: r.collection, databaseId: r.database_id });
      }
    }
  }

  /**
   * Pruning after the crawl: known documents the listing (taken before the crawl) no longer has are deleted, unless
   * the crawl wrote them; listed documents whose hash differs from what the service holds (and that the crawl did not
   * write) are re-read with `fetchDocuments`. The mass-deletion guard holds back a listing that is empty, or would
   * delete more than the threshold of the known documents, until the next sync's listing says the same.
   */
  private async prune(provider: ConnectorProvider, pctx: ProviderContext, known: Map<string, KnownDocument>, listing: ExistingDocument[]): Promise<{ counts: SyncCounts; held: boolean }> {
    const hashes = new Map<string, string | undefined>();
    for (const [id, doc] of known) hashes.set(id, doc.contentHash);
    for (const [id, hash] of this.writer.crawled) {
      if (hash === null) hashes.delete(id);
      else if (known.has(id)) hashes.set(id, hash);
    }
    const { gone: candidates, changed } = await reconcile(hashes, iterate(listing));
    const gone = candidates.filter((id) => !this.writer.crawled.has(id));
    let counts: SyncCounts = { ...NO_COUNTS };
    let held = false;
    const { holds, settings } = this.deps;
    const mass = known.size > 0 && gone.length > 0 && (listing.length === 0 || gone.length > settings.massDeletionThreshold * known.size);
    if (mass) {
      const previous = await holds.get(this.job.connectorId, this.job.resourceId);
      if (previous && previous.generation === this.generation) {
        this.deps.log.info({ connectorId: this.job.connectorId, resourceId: this.job.resourceId, gone: gone.length, known: known.size }, 'mass deletion confirmed by a second listing; pruning');
        await holds.clear(this.job.connectorId, this.job.resourceId);
      } else {
        held = true;
        await holds.hold(this.job.connectorId, this.job.resourceId, { generation: this.generation, known: known.size, listed: listing.length, gone: gone.length, heldAt: this.deps.clock() });
        this.deps.log.info(
          { connectorId: this.job.connectorId, resourceId: this.job.resourceId, gone: gone.length, known: known.size, listed: listing.length },
          'pruning held: the listing would delete more than the mass-deletion threshold; the next sync applies it if its listing agrees',
        );
      }
    } else if (gone.length || known.size) {
      await holds.clear(this.job.connectorId, this.job.resourceId);
    }
    if (!held) {
      for (let i = 0; i < gone.length; i += DELETE_BATCH) {
        await this.requireLiveConnector();
        const batch = gone.slice(i, i + DELETE_BATCH).map((id) => known.get(id)!);
        counts = addCounts(counts, await this.writer.deleteItems(batch.map((d) => ({ itemKey: d.itemKey, itemId: d.itemId, collection: d.collection }))));
      }
    }
    const refetch = changed.filter((id) => !this.writer.crawled.has(id));
    if (refetch.length && provider.fetchDocuments) {
      let page: SyncEvent[] = [];
      for await (const event of provider.fetchDocuments(pctx, this.resourceConfig, refetch)) {
        if (event.kind === 'checkpoint') continue;
        page.push(event);
        if (page.length >= DELETE_BATCH) {
          counts = addCounts(counts, await this.writer.applyPage(page));
          page = [];
        }
      }
      if (page.length) counts = addCounts(counts, await this.writer.applyPage(page));
    }
    return { counts, held };
  }
}


async function collect<T>(iterable: AsyncIterable<T>, signal?: AbortSignal): Promise<T[]> {
  const out: T[] = [];
  for await (const x of iterable) {
    out.push(x);
    if (signal?.aborted) throw signal.reason;
  }
  return out;
}

async function* iterate<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}
