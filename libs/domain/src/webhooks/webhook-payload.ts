import { INDEXING_STATUS_CHANGED } from './webhook.events';

/**
 * The outbound payload of `indexing.status_changed`, field for field as the spec's Events section names
 * it. Built once, when the delivery record is created, and sent byte for byte on every attempt.
 */
export interface StatusChangedPayload {
  event: typeof INDEXING_STATUS_CHANGED;
  delivery_id: string;
  id: string;
  database: string;
  collection: string;
  status: string;
  timestamp: string;
  error_code?: string;
  error_message?: string;
  /** deprecated: an identifier of the database (its id, not its name) */
  tenant_id: string;
  /** deprecated: exact alias of collection */
  sub_tenant_id: string;
  test?: true;
}

/** Delivery ids are derived from the status event's id, so a rebuild yields the same ids. */
export const deliveryIdFor = (statusEventId: string) => `dlv_${statusEventId}`;

export function statusChangedPayload(p: {
  deliveryId: string;
  itemId: string;
  databaseName: string;
  databaseId: string;
  collection: string;
  status: string;
  timestamp: string;
  errorCode?: string | null;
  errorMessage?: string | null;
}): StatusChangedPayload {
  const payload: StatusChangedPayload = {
    event: INDEXING_STATUS_CHANGED,
    delivery_id: p.deliveryId,
    id: p.itemId,
    database: p.databaseName,
    collection: p.collection,
    status: p.status,
    timestamp: p.timestamp,
    tenant_id: p.databaseId,
    sub_tenant_id: p.collection,
  };
  if (p.status !== 'completed' && p.status !== 'success') {
    if (p.errorCode) payload.error_code = p.errorCode;
    if (p.errorMessage) payload.error_message = p.errorMessage;
  }
  // Keep the spec's field order with the deprecated aliases last.
  const { tenant_id, sub_tenant_id, ...rest } = payload;
  return { ...rest, tenant_id, sub_tenant_id };
}

/** The synthetic test event: every scope field holds the organization id; `test` is true; no record exists. */
export function testPayload(orgId: string, deliveryId: string, timestamp: string): StatusChangedPayload {
  return {
    event: INDEXING_STATUS_CHANGED,
    delivery_id: deliveryId,
    id: 'test_document',
    database: orgId,
    collection: orgId,
    status: 'completed',
    timestamp,
    tenant_id: orgId,
    sub_tenant_id: orgId,
    test: true,
  };
}
