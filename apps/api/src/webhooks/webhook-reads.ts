import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { invalid } from '@crs/domain/errors';
import { DELIVERY_STATUSES, type VisibleDeliveryStatus } from '@crs/domain/webhooks/webhook.events';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { findDelivery, findRegistration, listDeliveries, type ListedDeliveryRow } from '@crs/projections/webhook-outbox/webhook-outbox.queries';

export interface RegistrationView {
  registered: boolean;
  url: string | null;
  event_types: string[];
  signing_secret_configured: boolean;
}

export interface DeliveryRecordView {
  delivery_id: string;
  doc_id: string;
  status: VisibleDeliveryStatus;
  indexing_status: string;
  event_type: string;
  attempts: number;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
  database: string;
  collection: string;
  next_attempt_at: string | null;
  last_status_code: number | null;
}

export const LIST_LIMIT = { min: 1, max: 100, default: 20 };

/** Reads of the webhook outbox read model (plus the dispatcher's leases for `sweeping`). */
@Injectable()
export class WebhookReads {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async current(orgId: string): Promise<{ url: string; eventTypes: string[]; secretId: string | null } | null> {
    const row = await findRegistration(this.ds, orgId);
    return row ? { url: row.url, eventTypes: row.event_types, secretId: row.secret_id } : null;
  }

  /**
   * A key limited to some databases sees the receiver's origin only (`https://host:port/…`): the webhook carries every
   * database's events, and receiver URLs often hold a token in their path or query (a chat app's incoming-webhook
   * URL is the credential itself).
   */
  async registration(orgId: string, auth: { databases: string[] | null }): Promise<RegistrationView> {
    const hook = await this.current(orgId);
    if (!hook) return { registered: false, url: null, event_types: [], signing_secret_configured: false };
    return { registered: true, url: auth.databases === null ? hook.url : originOnly(hook.url), event_types: hook.eventTypes, signing_secret_configured: hook.secretId !== null };
  }

  /**
   * Newest first (by the log position of the status event, unique per record: a stable order); the cursor
   * is the last position seen. Keys limited to some databases see only those databases' deliveries.
   */
  async list(orgId: string, auth: { databases: string[] | null }, q: { limit: number; status?: VisibleDeliveryStatus; cursor?: string }) {
    const after = q.cursor ? decodeCursor(q.cursor) : null;
    const rows = await listDeliveries(this.ds, orgId, { before: after, status: q.status ?? null, databases: auth.databases, limit: q.limit + 1 });
    const page = rows.slice(0, q.limit);
    const more = rows.length > q.limit;
    return {
      deliveries: page.map(toView),
      count: page.length,
      next_cursor: more ? encodeCursor(Number(page[page.length - 1].position)) : null,
    };
  }

  async delivery(orgId: string, auth: { databases: string[] | null }, deliveryId: string): Promise<(DeliveryRecordView & { databaseId: string }) | null> {
    const row = await findDelivery(this.ds, orgId, deliveryId, auth.databases);
    return row ? { ...toView(row), databaseId: row.database_id } : null;
  }
}

export function parseListQuery(query: Record<string, unknown>): { limit: number; status?: VisibleDeliveryStatus; cursor?: string } {
  for (const k of Object.keys(query)) if (!['limit', 'status', 'cursor'].includes(k)) throw invalid(`${k} is not a parameter of this endpoint (limit, status, cursor)`);
  let limit = LIST_LIMIT.default;
  if (query.limit !== undefined) {
    const s = String(query.limit);
    if (!/^\d+$/.test(s) || Number(s) < LIST_LIMIT.min || Number(s) > LIST_LIMIT.max) throw invalid(`limit must be an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}`);
    limit = Number(s);
  }
  let status: VisibleDeliveryStatus | undefined;
  if (query.status !== undefined) {
    if (typeof query.status !== 'string' || !DELIVERY_STATUSES.includes(query.status as VisibleDeliveryStatus)) throw invalid(`status must be one of ${DELIVERY_STATUSES.join(', ')}`);
    status = query.status as VisibleDeliveryStatus;
  }
  let cursor: string | undefined;
  if (query.cursor !== undefined && query.cursor !== '') {
    if (typeof query.cursor !== 'string') throw invalid('cursor must be the next_cursor of the previous page');
    decodeCursor(query.cursor);
    cursor = query.cursor;
  }
  return { limit, status, cursor };
}

function encodeCursor(position: number): string {
  return Buffer.from(`v1:${position}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): number {
  const m = /^v1:(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw invalid('cursor is not a next_cursor returned by this endpoint');
  return Number(m[1]);
}

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

function toView(r: ListedDeliveryRow): DeliveryRecordView {
  return {
    delivery_id: r.delivery_id,
    doc_id: r.doc_id,
    status: r.visible_status,
    indexing_status: r.indexing_status,
    event_type: r.event_type,
    attempts: r.attempts,
    error_code: r.error_code,
    error_message: r.error_message,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
    database: r.database_name,
    collection: r.collection,
    next_attempt_at: ['pending', 'failed'].includes(r.status) ? iso(r.next_attempt_at) : null,
    last_status_code: r.last_status_code,
  };
}

/** `scheme://host[:port]/…`: where events go, without the path, query or credentials that may authorize it. */
export function originOnly(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '…';
  }
}
