import type { VisibleDeliveryStatus } from '@crs/domain/webhooks/webhook.events';
import type { ListedDeliveryRow } from '@crs/projections/webhook-outbox/webhook-outbox.queries';

/** A delivery record as GET /webhooks/indexing/deliveries and GET …/deliveries/:delivery_id answer it. */
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

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/** The status callers see (`sweeping` while a dispatcher holds the record); the next attempt only while one is due. */
export function deliveryView(r: ListedDeliveryRow): DeliveryRecordView {
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
