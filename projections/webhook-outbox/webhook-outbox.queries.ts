import type { Sql } from '@crs/persistence/data-source';
import type { VisibleDeliveryStatus } from '@crs/domain/webhooks/webhook.events';
import { inActiveCollection } from '@crs/projections/databases/databases.queries';

/** A row of rm_webhooks: an organization's registration. */
export interface WebhookRow {
  org_id: string;
  url: string;
  event_types: string[];
  secret_id: string | null;
  secret_generated: boolean | null;
  registered_at: Date;
  updated_at: Date;
}

/** A row of rm_webhook_databases: a database's name and organization, for the payload's `database`. */
export interface WebhookDatabaseRow {
  database_id: string;
  org_id: string;
  name: string;
}

/** A row of rm_webhook_deliveries: one delivery record. */
export interface WebhookDeliveryRow {
  delivery_id: string;
  org_id: string;
  database_id: string;
  collection: string;
  doc_id: string;
  event_type: string;
  indexing_status: string;
  payload: string;
  status: string;
  attempts: number;
  round_attempts: number;
  last_status_code: number | null;
  error_code: string | null;
  error_message: string | null;
  next_attempt_at: Date | null;
  position: string;
  created_at: Date;
  updated_at: Date;
}

/** An organization's registration: where events go, which ones, and the id of its current signing secret. */
export async function findRegistration(sql: Sql, orgId: string): Promise<Pick<WebhookRow, 'url' | 'event_types' | 'secret_id'> | undefined> {
  const [row] = await sql.query('SELECT url, event_types, secret_id FROM rm_webhooks WHERE org_id = $1', [orgId]);
  return row;
}

/** Where an organization's deliveries are sent and the id of the secret they are signed with. */
export async function findDeliveryTarget(sql: Sql, orgId: string): Promise<Pick<WebhookRow, 'url' | 'secret_id'> | undefined> {
  const [hook]: Pick<WebhookRow, 'url' | 'secret_id'>[] = await sql.query('SELECT url, secret_id FROM rm_webhooks WHERE org_id = $1', [orgId]);
  return hook;
}

// ---- the dispatcher ----

/**
 * Leases (webhook_delivery_leases) up to `limit` due records (pending, or failed whose next attempt is due) whose lease
 * is free or expired, the earliest due first; returns their ids.
 */
export async function claimDueDeliveries(sql: Sql, owner: string, leaseMs: number, limit: number): Promise<string[]> {
  const rows: Pick<WebhookDeliveryRow, 'delivery_id'>[] = await sql.query(
    `INSERT INTO webhook_delivery_leases (delivery_id, owner, lease_until, claimed_at)
       SELECT d.delivery_id, $1, now() + ($2 || ' milliseconds')::interval, now()
       FROM rm_webhook_deliveries d LEFT JOIN webhook_delivery_leases l ON l.delivery_id = d.delivery_id
       WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= now() AND (l.delivery_id IS NULL OR l.lease_until < now())
       ORDER BY d.next_attempt_at, d.position
       LIMIT $3
       ON CONFLICT (delivery_id) DO UPDATE SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, claimed_at = EXCLUDED.claimed_at
         WHERE webhook_delivery_leases.lease_until < now()
       RETURNING delivery_id`,
    [owner, String(leaseMs), limit],
  );
  return rows.map((r) => r.delivery_id);
}

export type DeliveryToSendRow = Pick<WebhookDeliveryRow, 'delivery_id' | 'org_id' | 'database_id' | 'event_type' | 'payload' | 'status'>;

/** What sending a delivery needs: its record's payload, organization and status. */
export async function findDeliveryToSend(sql: Sql, deliveryId: string): Promise<DeliveryToSendRow | undefined> {
  const [record]: DeliveryToSendRow[] = await sql.query(
    'SELECT delivery_id, org_id, database_id, event_type, payload, status FROM rm_webhook_deliveries WHERE delivery_id = $1',
    [deliveryId],
  );
  return record;
}

/** Whether a delivery's record exists and its collection is active. */
export async function deliveryIsLive(sql: Sql, deliveryId: string): Promise<boolean> {
  const [live] = await sql.query(
    `SELECT 1 FROM rm_webhook_deliveries d JOIN rm_collections c ON c.database_id = d.database_id AND c.name = d.collection AND c.status = 'active'
       WHERE d.delivery_id = $1`,
    [deliveryId],
  );
  return Boolean(live);
}

// ---- a database's deletion ----

/** The ids of a database's (or collection's) delivery records. */
export function deliveryIdsOf(sql: Sql, databaseId: string, collection?: string): Promise<Pick<WebhookDeliveryRow, 'delivery_id'>[]> {
  return collection
    ? sql.query('SELECT delivery_id FROM rm_webhook_deliveries WHERE database_id = $1 AND collection = $2', [databaseId, collection])
    : sql.query('SELECT delivery_id FROM rm_webhook_deliveries WHERE database_id = $1', [databaseId]);
}

/** Removes the dispatcher's leases on a database's delivery records. */
export async function releaseDeliveryLeasesOf(sql: Sql, databaseId: string): Promise<void> {
  await sql.query('DELETE FROM webhook_delivery_leases l USING rm_webhook_deliveries d WHERE d.delivery_id = l.delivery_id AND d.database_id = $1', [databaseId]);
}

// ---- GET /webhooks/indexing/deliveries ----

/** A delivery record as listed: its status as callers see it (`sweeping` while a dispatcher holds it) and its database's name. */
export type ListedDeliveryRow = WebhookDeliveryRow & { visible_status: VisibleDeliveryStatus; database_name: string };

/** `sweeping` is a pending or failed record whose dispatcher lease is live. */
const VISIBLE_STATUS = `CASE WHEN l.lease_until > now() AND d.status IN ('pending', 'failed') THEN 'sweeping' ELSE d.status END`;

/**
 * Delivery records name their item, so those of a collection or database being deleted are not shown (the purge
 * removes them; until it has run, the record of the deletion request hides them). Every query appends its WHERE
 * conditions after this one's.
 */
const SELECT_DELIVERIES = `SELECT d.*, ${VISIBLE_STATUS} AS visible_status, COALESCE(db.name, '') AS database_name
  FROM rm_webhook_deliveries d
  LEFT JOIN webhook_delivery_leases l ON l.delivery_id = d.delivery_id
  LEFT JOIN rm_webhook_databases db ON db.database_id = d.database_id
  WHERE ${inActiveCollection('d')}`;

/**
 * Up to `limit` of an organization's records, newest first (by the log position of their status event), before the
 * position `before` when given, of one visible status when given, of the databases named in `databases` unless null.
 */
export function listDeliveries(
  sql: Sql,
  orgId: string,
  q: { before: number | null; status: VisibleDeliveryStatus | null; databases: string[] | null; limit: number },
): Promise<ListedDeliveryRow[]> {
  return sql.query(
    `${SELECT_DELIVERIES}
       AND d.org_id = $1 AND ($2::bigint IS NULL OR d.position < $2) AND ($3::text IS NULL OR ${VISIBLE_STATUS} = $3)
         AND ($4::text[] IS NULL OR db.name = ANY($4))
       ORDER BY d.position DESC
       LIMIT $5`,
    [orgId, q.before, q.status, q.databases, q.limit],
  );
}

/** One of an organization's records, if it is of a database named in `databases` (unless null). */
export async function findDelivery(sql: Sql, orgId: string, deliveryId: string, databases: string[] | null): Promise<ListedDeliveryRow | undefined> {
  const [row] = await sql.query(`${SELECT_DELIVERIES} AND d.org_id = $1 AND d.delivery_id = $2 AND ($3::text[] IS NULL OR db.name = ANY($3))`, [orgId, deliveryId, databases]);
  return row;
}
