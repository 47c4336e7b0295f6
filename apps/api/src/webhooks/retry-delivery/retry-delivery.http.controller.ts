import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { authOf } from '../../http/auth.hook';
import { commandContext } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { WebhookCommands } from '../webhook-commands';

@ApiTags('webhooks')
@Controller()
export class RetryDeliveryController {
  constructor(private readonly commands: WebhookCommands) {}

  @Post('webhooks/indexing/deliveries/:delivery_id/retry')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Queue a failed or permanently_failed delivery again (409 DELIVERY_NOT_RETRYABLE otherwise)' })
  async retry(@Req() req: FastifyRequest, @Param('delivery_id') deliveryId: string) {
    return this.commands.retry(commandContext(req), authOf(req), deliveryId);
  }
}
