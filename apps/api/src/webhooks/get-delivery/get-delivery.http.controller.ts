import { Controller, Get, Param, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { GetDelivery } from './get-delivery.handler';
import { ApiDirectResponse, ApiErrorResponses } from '../../http/openapi';
import { DeliveryRecord } from '../delivery.response.dto';

@ApiTags('webhooks')
@Controller()
export class GetDeliveryController {
  constructor(private readonly queries: QueryBus) {}

  @Get('webhooks/indexing/deliveries/:delivery_id')
  @DirectResponse()
  @ApiOperation({ summary: 'One delivery record (path parameter percent-encoded)' })
  @ApiDirectResponse(DeliveryRecord)
  @ApiErrorResponses(400, 401, [404, 'DELIVERY_NOT_FOUND'])
  async get(@Req() req: FastifyRequest, @Param('delivery_id') deliveryId: string) {
    return this.queries.execute(new GetDelivery(callerOf(req), deliveryId));
  }
}
