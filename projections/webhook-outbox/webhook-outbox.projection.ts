import type { RecordedEvent } from '@crs/eventstore/event-store.port';
import type { Sql } from '@crs/persistence/data-source';
import { inSegments, type ReadModelProjection } from '@crs/persistence/projection';
import { INDEXING_STATUS_CHANGED, notifiesWebhook } from '@crs/domain/webhooks/webhook.events';
import { deliveryIdFor, statusChangedPayload } from '@crs/domain/webhooks/webhook-payload';

/**
 * The webhook outbox. It owns three tables so it never reads another projection (a rebuild then
 * reproduces it on its own, byte for byte):
 *   rm_webhooks            each organization's registration as of the log position (URL, event types, current secret id)
 *   rm_webhook_databases   database id → name and organization, for the payload's `database`
 *   rm_webhook_deliveries  one record per terminal status event of an organization whose registration, at that
 *                          position, subscribes to indexing.status_changed; its state follows DeliveryAttempted
 *                          and DeliveryRetryRequested, whose data already carries every decision (next attempt
 *                          time with its jitter), so a rebuild never sends anything and yields the same states.
 * The dispatcher's lease (`sweeping`) lives outside, in webhook_delivery_leases.
 */
export const webhookOutboxProjection: ReadModelProjection = {
  kind: 'read-model',
  name: 'webhook-outbox',
  tables: ['rm_webhooks', 'rm_webhook_databases', 'rm_webhook_deliveries'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS rm_webhooks (
      org_id text PRIMARY KEY,
      url text NOT NULL,
      event_types jsonb NOT NULL,
      secret_id uuid,
      secret_generated boolean,
      registered_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS rm_webhook_databases (
      database_id uuid PRIMARY KEY,
      org_id text NOT NULL,
      name text NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS rm_webhook_deliveries (
      delivery_id text PRIMARY KEY,
      org_id text NOT NULL,
      database_id uuid NOT NULL,
      collection text NOT NULL,
      doc_id text NOT NULL,
      event_type text NOT NULL,
      indexing_status text NOT NULL,
      payload text NOT NULL,
      status text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      round_attempts integer NOT NULL DEFAULT 0,
      last_status_code integer,
      error_code text,
      error_message text,
      next_attempt_at timestamptz,
      position bigint NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS rm_webhook_deliveries_list ON rm_webhook_deliveries (org_id, position DESC)`,
    `CREATE INDEX IF NOT EXISTS rm_webhook_deliveries_due ON rm_webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'failed')`,
  ],
  handles: [
    'WebhookRegistered', 'WebhookDeleted', 'SigningSecretSet', 'SigningSecretRemoved',
    'StatusAdvanced', 'DeliveryAttempted', 'DeliveryRetryRequested',
    'DatabaseCreated', 'DatabaseDeleted', 'CollectionDeleted', 'ItemDeleted',
  ],
  async apply(event: RecordedEvent, sql: Sql): Promise<void> {
    const at = event.metadata.occurredAt;
    const org = event.metadata.orgId;
    switch (event.type) {
      case 'WebhookRegistered':
        await sql.query(
          `INSERT INTO rm_webhooks (org_id, url, event_types, registered_at, updated_at) VALUES ($1, $2, $3, $4, $4)
           ON CONFLICT (org_id) DO UPDATE SET url = EXCLUDED.url, event_types = EXCLUDED.event_types, updated_at = EXCLUDED.updated_at`,
          [org, event.data.url, JSON.stringify(event.data.eventTypes), at],
        );
        return;
      case 'WebhookDeleted':
        await sql.query('DELETE FROM rm_webhooks WHERE org_id = $1', [org]);
        return;
      case 'SigningSecretSet':
        await sql.query('UPDATE rm_webhooks SET secret_id = $2, secret_generated = $3, updated_at = $4 WHERE org_id = $1', [org, event.data.secretId, event.data.generated, at]);
        return;
      case 'SigningSecretRemoved':
        await sql.query('UPDATE rm_webhooks SET secret_id = NULL, secret_generated = NULL, updated_at = $2 WHERE org_id = $1', [org, at]);
        return;
      case 'StatusAdvanced': {
        const d = event.data;
        if (!notifiesWebhook(d)) return;
        const [hook] = await sql.query(`SELECT 1 FROM rm_webhooks WHERE org_id = $1 AND event_types @> $2::jsonb`, [org, JSON.stringify([INDEXING_STATUS_CHANGED])]);
        if (!hook) return; // no registration for this event at this point of the log: nothing to deliver, ever
        const [db] = await sql.query('SELECT name FROM rm_webhook_databases WHERE database_id = $1', [d.databaseId]);
        const deliveryId = deliveryIdFor(event.metadata.eventId);
        const payload = statusChangedPayload({
          deliveryId, itemId: d.itemId, databaseName: db?.name ?? '', databaseId: d.databaseId, collection: d.collection,
          status: d.status, timestamp: at, errorCode: d.errorCode, errorMessage: d.message,
        });
        await sql.query(
          `INSERT INTO rm_webhook_deliveries (delivery_id, org_id, database_id, collection, doc_id, event_type, indexing_status, payload, status,
             next_attempt_at, position, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $9, $9)
           ON CONFLICT (delivery_id) DO NOTHING`,
          [deliveryId, org, d.databaseId, d.collection, d.itemId, INDEXING_STATUS_CHANGED, d.status, JSON.stringify(payload), at, event.position],
        );
        return;
      }
      case 'DeliveryAttempted': {
        const d = event.data;
        await sql.query(
          `UPDATE rm_webhook_deliveries SET status = $2, attempts = $3, round_attempts = $4, last_status_code = $5, error_code = $6,
             error_message = $7, next_attempt_at = $8, updated_at = $9
           WHERE delivery_id = $1`,
          [d.deliveryId, d.status, d.attempt, d.roundAttempt, d.statusCode, d.errorCode, d.errorMessage, d.nextAttemptAt, at],
        );
        return;
      }
      case 'DeliveryRetryRequested':
        await sql.query(
          `UPDATE rm_webhook_deliveries SET status = 'pending', round_attempts = 0, next_attempt_at = $2, updated_at = $2 WHERE delivery_id = $1`,
          [event.data.deliveryId, at],
        );
        return;
      case 'DatabaseCreated':
        await sql.query('INSERT INTO rm_webhook_databases (database_id, org_id, name) VALUES ($1, $2, $3) ON CONFLICT (database_id) DO NOTHING', [event.data.databaseId, org, event.data.name]);
        return;
      case 'DatabaseDeleted':
        // Deletion is real: delivery records name the database's items, so they go with it.
        await sql.query('DELETE FROM rm_webhook_deliveries WHERE database_id = $1', [event.data.databaseId]);
        await sql.query('DELETE FROM rm_webhook_databases WHERE database_id = $1', [event.data.databaseId]);
        return;
      case 'CollectionDeleted':
        await sql.query('DELETE FROM rm_webhook_deliveries WHERE database_id = $1 AND collection = $2', [event.data.databaseId, event.data.collection]);
        return;
      case 'ItemDeleted':
        // An item deleted on its own takes its records along too. A record names its item by id in its collection
        // (as the payload does), not by store: an id both stores of a collection hold shares its records.
        await sql.query('DELETE FROM rm_webhook_deliveries WHERE database_id = $1 AND collection = $2 AND doc_id = $3', [event.data.databaseId, event.data.collection, event.data.itemId]);
        return;
    }
  },
  /**
   * A page at once: a run of StatusAdvanced (nearly all of the log this projection sees) reads the registrations and
   * database names it needs once, which no event of the run can change, and inserts its deliveries in one statement
   * (the first of a delivery id wins, as in apply). Every other event runs on its own, in order.
   */
  async applyBatch(events: RecordedEvent[], sql: Sql): Promise<void> {
    await inSegments(
      events,
      (e) => e.type !== 'StatusAdvanced',
      (run) => insertDeliveries(run, sql),
      (e) => webhookOutboxProjection.apply(e, sql),
    );
  },
};

async function insertDeliveries(run: RecordedEvent[], sql: Sql): Promise<void> {
  const terminal = run.filter((e) => e.type === 'StatusAdvanced').filter((e) => notifiesWebhook(e.data));
  if (!terminal.length) return;
  const orgs = [...new Set(terminal.map((e) => e.metadata.orgId))];
  const hooked = new Set(
    (await sql.query<{ org_id: string }[]>(`SELECT org_id FROM rm_webhooks WHERE org_id = ANY($1) AND event_types @> $2::jsonb`, [orgs, JSON.stringify([INDEXING_STATUS_CHANGED])])).map((r) => r.org_id),
  );
  const due = terminal.filter((e) => hooked.has(e.metadata.orgId));
  if (!due.length) return; // no registration for these events at this point of the log: nothing to deliver, ever
  const dbIds = [...new Set(due.map((e) => e.data.databaseId))];
  const names = new Map(
    (await sql.query<{ id: string; name: string }[]>('SELECT database_id::text AS id, name FROM rm_webhook_databases WHERE database_id = ANY($1::uuid[])', [dbIds])).map((r) => [r.id, r.name]),
  );
  const rows: unknown[][] = [];
  const seen = new Set<string>();
  for (const event of due) {
    const d = event.data;
    const at = event.metadata.occurredAt;
    const deliveryId = deliveryIdFor(event.metadata.eventId);
    if (seen.has(deliveryId)) continue;
    seen.add(deliveryId);
    const payload = statusChangedPayload({
      deliveryId, itemId: d.itemId, databaseName: names.get(String(d.databaseId).toLowerCase()) ?? '', databaseId: d.databaseId, collection: d.collection,
      status: d.status, timestamp: at, errorCode: d.errorCode, errorMessage: d.message,
    });
    rows.push([deliveryId, event.metadata.orgId, d.databaseId, d.collection, d.itemId, INDEXING_STATUS_CHANGED, d.status, JSON.stringify(payload), at, event.position]);
  }
  const col = (i: number) => rows.map((r) => r[i] ?? null);
  await sql.query(
    `INSERT INTO rm_webhook_deliveries (delivery_id, org_id, database_id, collection, doc_id, event_type, indexing_status, payload, status,
       next_attempt_at, position, created_at, updated_at)
     SELECT id, org, db, coll, doc, et, st, pl, 'pending', at, pos, at, at
     FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::bigint[])
       AS u(id, org, db, coll, doc, et, st, pl, at, pos)
     ON CONFLICT (delivery_id) DO NOTHING`,
    Array.from({ length: 10 }, (_, i) => col(i)),
  );
}
