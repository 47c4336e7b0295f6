import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner, RunnerLogger } from '@crs/persistence/projection-runner';
import { streams } from '@crs/domain/streams';
import { deliveryIdFor } from '@crs/domain/webhooks/webhook-payload';
import { notifiesWebhook } from '@crs/domain/webhooks/webhook.events';
import type { AppConfig } from '@crs/config';
import type { DatabaseResources } from '@crs/persistence/database-resources';
import { KEY_FILE_NAME, SigningSecretVault } from './signing-secret-vault';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookSender } from './webhook-sender';
import { WebhookUrlGuard } from './webhook-url-guard';
import { deliveryIdsOf, releaseDeliveryLeasesOf } from '@crs/projections/webhook-outbox/webhook-outbox.queries';
import { deletedItemKeys } from '@crs/projections/item-tombstones/item-tombstones.queries';

/** What webhooks need at run time, shared by the API (registration, test delivery) and the worker (dispatcher). */
export interface WebhookRuntime {
  guard: WebhookUrlGuard;
  vault: SigningSecretVault;
  sender: WebhookSender;
  dispatcher: WebhookDispatcher;
}

export async function openWebhookRuntime(p: {
  ds: DataSource;
  store: EventStore;
  runner: ProjectionRunner;
  config: AppConfig;
  log: RunnerLogger;
  resources: DatabaseResources;
}): Promise<WebhookRuntime> {
  const c = p.config.webhooks;
  const guard = new WebhookUrlGuard({ allowLoopback: c.allowLoopback });
  const vault = new SigningSecretVault(p.ds, c.secretKey, join(p.config.dataDir, KEY_FILE_NAME));
  await vault.init();
  await WebhookDispatcher.migrate(p.ds);
  const sender = new WebhookSender(guard);
  const dispatcher = new WebhookDispatcher(p.ds, p.store, p.runner, vault, sender, p.log, {
    concurrency: c.concurrency,
    leaseMs: c.leaseMs,
    pollMs: c.pollMs,
    timeoutMs: c.timeoutMs,
    scheduleMs: c.retryScheduleMs,
    jitter: c.retryJitter,
  });
  // Delivery streams name a database's items: deleted with the database (or collection).
  p.resources.add({
    streamsOf: async (databaseId, collection) => {
      const rows = await deliveryIdsOf(p.ds, databaseId, collection);
      const ids = new Set(rows.map((r) => r.delivery_id));
      for (const id of await deletedItemsDeliveries(p.ds, p.store, databaseId, collection)) ids.add(id);
      return [...ids].map((id) => streams.webhookDelivery(id));
    },
    purgeDatabase: async (databaseId) => {
      await releaseDeliveryLeasesOf(p.ds, databaseId);
    },
  });
  return { guard, vault, sender, dispatcher };
}

/** Item streams read at once while listing a deletion's delivery streams. */
const STREAMS_PER_READ = 500;

/**
 * The deliveries of items deleted one by one: their records went with them (the outbox handles ItemDeleted), but their
 * streams stay, like the items' own, until the collection or database goes. A delivery id is derived from its
 * terminal status event's id, and the item's stream still holds that event (the item-tombstones read model lists the
 * streams). An id whose status found no registration names a stream that was never written: deleting it is a no-op.
 */
async function deletedItemsDeliveries(ds: DataSource, store: EventStore, databaseId: string, collection?: string): Promise<string[]> {
  const rows = await deletedItemKeys(ds, databaseId, collection);
  const ids: string[] = [];
  for (let i = 0; i < rows.length; i += STREAMS_PER_READ) {
    const histories = await store.readStreams(rows.slice(i, i + STREAMS_PER_READ).map((r) => streams.item(databaseId, r.item_key)));
    for (const history of histories.values()) {
      for (const e of history) if (e.type === 'StatusAdvanced' && notifiesWebhook(e.data)) ids.push(deliveryIdFor(e.metadata.eventId));
    }
  }
  return ids;
}
