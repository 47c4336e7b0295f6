import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { notFound } from '@crs/domain/errors';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { findDelivery } from '@crs/projections/webhook-outbox/webhook-outbox.queries';
import type { Caller } from '../../use-case/caller';
import { deliveryView, type DeliveryRecordView } from '../delivery-view';

/** One delivery record by its id. */
export class GetDelivery extends Query<DeliveryRecordView> {
  constructor(readonly caller: Caller, readonly deliveryId: string) {
    super();
  }
}

/** 404 DELIVERY_NOT_FOUND unless the record is the organization's and of a database the key reaches. */
@QueryHandler(GetDelivery)
export class GetDeliveryHandler implements IQueryHandler<GetDelivery> {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async execute({ caller, deliveryId }: GetDelivery): Promise<DeliveryRecordView> {
    const row = await findDelivery(this.ds, caller.key.orgId, deliveryId, caller.key.databases);
    if (!row) throw notFound('DELIVERY_NOT_FOUND', `no delivery '${deliveryId}'`);
    return deliveryView(row);
  }
}
