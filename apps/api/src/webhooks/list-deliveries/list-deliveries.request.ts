import { invalid } from '@crs/domain/errors';
import { DELIVERY_STATUSES, type VisibleDeliveryStatus } from '@crs/domain/webhooks/webhook.events';
import { decodeCursor } from './delivery-cursor';

export const LIST_LIMIT = { min: 1, max: 100, default: 20 };

export interface ListDeliveriesParams {
  limit: number;
  status?: VisibleDeliveryStatus;
  cursor?: string;
}

/**
 * The query string of GET /webhooks/indexing/deliveries, checked by hand rather than by a class-validator DTO: an
 * unknown parameter is 400 naming the endpoint's parameters, and each bad value has its own message.
 */
export function parseListQuery(query: Record<string, unknown>): ListDeliveriesParams {
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
