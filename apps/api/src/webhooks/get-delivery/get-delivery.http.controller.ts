import { Controller, Get, Param, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { notFound } from '@crs/domain/errors';
import { authOf } from '../../http/auth.hook';
import { DirectResponse } from '../../http/envelope.interceptor';
import { WebhookReads } from '../webhook-reads';

@ApiTags('webhooks')
@Controller()
export class GetDeliveryController {
  constructor(private readonly reads: WebhookReads) {}

  @Get('webhooks/indexing/deliveries/:delivery_id')
  @DirectResponse()
  @ApiOperation({ summary: 'One delivery record (path parameter percent-encoded)' })
  async get(@Req() req: FastifyRequest, @Param('delivery_id') deliveryId: string) {
    const auth = authOf(req);
    const record = await this.reads.delivery(auth.orgId, auth, deliveryId);
    if (!record) throw notFound('DELIVERY_NOT_FOUND', `no delivery '${deliveryId}'`);
    const { databaseId: _databaseId, ...view } = record;
    return view;
  }
}
