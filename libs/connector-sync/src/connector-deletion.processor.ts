import type { ItemEvent } from '@crs/domain/items/item.events';
import type { ConnectorCredentialVault } from '@crs/connectors/credential-vault';
import type { SyncRequests } from '@crs/connectors/sync-requests';
import type { EventStore, RecordedEvent } from '@crs/eventstore/event-store.port';
import { decideOnItems, type ItemDecision } from '@crs/eventstore/item-stream';
import type { Sql } from '@crs/persistence/data-source';
import type { Processor } from '@crs/persistence/projection';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { syncedItems } from '@crs/projections/items/items.queries';
import { decideOnConnector, loadConnector } from './connector-streams';
import type { PruneHolds } from './prune-holds';

/** Item deletions per multi-stream append. */
const BATCH = 500;

/**
 * Carries out a connector's deletion and a resource's removal per their content policy (docs/connectors.md, "Content
 * policy on delete"):
 *
 * - `ConnectorDeletionRequested`: with `delete`, an `ItemDeleted` for every item the connector synced; with `keep`,
 *   the items stay as they are. Then the sealed credentials row is deleted, pending sync requests and pruning holds
 *   are forgotten, and `MarkDeleted` ends the deletion (`ConnectorDeleted`).
 * - `ResourceRemoved` with `delete`: an `ItemDeleted` for every item the resource synced before its removal (a
 *   generation added again later keeps what it synced).
 *
 * Each step is idempotent (only live items are deleted, `MarkDeleted` of a deleted connector decides nothing, a
 * missing credentials row is no error), so a restart that handles an event again finishes what was started.
 */
export class ConnectorDeletionProcessor implements Processor {
  readonly kind = 'processor' as const;
  readonly name = 'connector-deletion';
  readonly handles = ['ConnectorDeletionRequested', 'ResourceRemoved'] as const;

  constructor(
    private readonly sql: Sql,
    private readonly store: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly credentials: ConnectorCredentialVault,
    private readonly requests: SyncRequests,
    private readonly holds: PruneHolds,
    private readonly pipeline: { wake(): void },
  ) {}

  async handle(event: RecordedEvent): Promise<void> {
    const ctx = { orgId: event.metadata.orgId, actor: `system:${this.name}`, ...(typeof event.metadata.requestId === 'string' ? { requestId: event.metadata.requestId } : {}) };
    switch (event.type) {
      case 'ConnectorDeletionRequested': {
        const { connectorId, contentPolicy } = event.data;
        await this.runner.waitFor(event.position, ['items'], 30_000);
        if (contentPolicy === 'delete') await this.deleteItems(ctx, connectorId, undefined, event.position);
        const state = await loadConnector(this.store, connectorId);
        const credentialsId = state.settings?.credentialsId;
        if (credentialsId) await this.credentials.delete(event.metadata.orgId, credentialsId);
        await this.requests.forget(connectorId);
        await this.holds.clear(connectorId);
        await decideOnConnector(this.store, ctx, { type: 'MarkDeleted', connectorId });
        return;
      }
      case 'ResourceRemoved': {
        const { connectorId, resourceId, contentPolicy } = event.data;
        await this.holds.clear(connectorId, resourceId);
        if (contentPolicy !== 'delete') return;
        await this.runner.waitFor(event.position, ['items'], 30_000);
        await this.deleteItems(ctx, connectorId, resourceId, event.position);
        return;
      }
      default:
        return;
    }
  }

  /** ItemDeleted for every live item the connector (or one resource) synced before `before`. */
  private async deleteItems(ctx: { orgId: string; actor: string; requestId?: string }, connectorId: string, resourceId: string | undefined, before: number): Promise<void> {
    let afterKey = '';
    let deleted = false;
    for (;;) {
      const rows = await syncedItems(this.sql, { connectorId, ...(resourceId !== undefined ? { resourceId } : {}), limit: BATCH, afterKey, ingestedBefore: before });
      if (!rows.length) break;
      afterKey = rows[rows.length - 1].item_key;
      const decisions: ItemDecision[] = rows.map((r) => ({
        ctx: { ...ctx, databaseId: r.database_id },
        databaseId: r.database_id,
        itemKey: r.item_key,
        decide: (state): ItemEvent[] => (state.live ? [{ type: 'ItemDeleted', data: { databaseId: r.database_id, itemKey: r.item_key, itemId: r.item_id, collection: r.collection, store: r.store } }] : []),
      }));
      const outcomes = await decideOnItems(this.store, decisions);
      for (const o of outcomes) {
        if (!o.events) throw o.error;
        if (o.events.length) deleted = true;
      }
    }
    if (deleted) this.pipeline.wake();
  }
}
