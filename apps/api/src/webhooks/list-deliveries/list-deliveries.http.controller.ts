import { Controller, Get, Query, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { ListDeliveries } from './list-deliveries.handler';
import { parseListQuery } from './list-deliveries.request';
import { ApiDirectResponse, ApiErrorResponses } from '../../http/openapi';
import { DeliveryPageResponse } from './list-deliveries.response.dto';

@ApiTags('webhooks')
@Controller()
export class ListDeliveriesController {
  constructor(private readonly queries: QueryBus) {}

  @Get('webhooks/indexing/deliveries')
  @DirectResponse()
  @ApiOperation({ summary: 'Delivery records, newest first' })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } })
  @ApiQuery({ name: 'status', required: false, enum: ['pending', 'sweeping', 'delivered', 'failed', 'permanently_failed'] })
  @ApiQuery({ name: 'cursor', required: false, description: 'next_cursor of the previous page' })
  @ApiDirectResponse(DeliveryPageResponse)
  @ApiErrorResponses(400, 401)
  async list(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    return this.queries.execute(new ListDeliveries(callerOf(req), parseListQuery(query ?? {})));
  }
}
