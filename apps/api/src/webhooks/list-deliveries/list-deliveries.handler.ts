import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { listDeliveries } from '@crs/projections/webhook-outbox/webhook-outbox.queries';
import type { Caller } from '../../use-case/caller';
import { deliveryView, type DeliveryRecordView } from '../delivery-view';
import { decodeCursor, encodeCursor } from './delivery-cursor';
import type { ListDeliveriesParams } from './list-deliveries.request';

export interface DeliveryPage {
  deliveries: DeliveryRecordView[];
  count: number;
  next_cursor: string | null;
}

/** A page of the organization's delivery records. */
export class ListDeliveries extends Query<DeliveryPage> {
  constructor(readonly caller: Caller, readonly params: ListDeliveriesParams) {
    super();
  }
}

/**
 * Newest first (by the log position of the status event, unique per record: a stable order); the cursor
 * is the last position seen. Keys limited to some databases see only those databases' deliveries.
 */
@QueryHandler(ListDeliveries)
export class ListDeliveriesHandler implements IQueryHandler<ListDeliveries> {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async execute({ caller, params }: ListDeliveries): Promise<DeliveryPage> {
    const after = params.cursor ? decodeCursor(params.cursor) : null;
    const rows = await listDeliveries(this.ds, caller.key.orgId, { before: after, status: params.status ?? null, databases: caller.key.databases, limit: params.limit + 1 });
    const page = rows.slice(0, params.limit);
    const more = rows.length > params.limit;
    return {
      deliveries: page.map(deliveryView),
      count: page.length,
      next_cursor: more ? encodeCursor(Number(page[page.length - 1].position)) : null,
    };
  }
}
