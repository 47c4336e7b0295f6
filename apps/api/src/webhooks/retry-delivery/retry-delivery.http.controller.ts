import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { RetryDelivery } from './retry-delivery.handler';
import { ApiDirectResponse, ApiErrorResponses } from '../../http/openapi';
import { RetryDeliveryResponse } from './retry-delivery.response.dto';

@ApiTags('webhooks')
@Controller()
export class RetryDeliveryController {
  constructor(private readonly commands: CommandBus) {}

  @Post('webhooks/indexing/deliveries/:delivery_id/retry')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Queue a failed or permanently_failed delivery again (409 DELIVERY_NOT_RETRYABLE otherwise)' })
  @ApiDirectResponse(RetryDeliveryResponse)
  @ApiErrorResponses(400, 401, [404, 'DELIVERY_NOT_FOUND'], [409, 'DELIVERY_NOT_RETRYABLE: only failed or permanently_failed deliveries, and not while one is being sent'])
  async retry(@Req() req: FastifyRequest, @Param('delivery_id') deliveryId: string) {
    return this.commands.execute(new RetryDelivery(callerOf(req), deliveryId));
  }
}
