import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { TestWebhook } from './test-webhook.handler';

@ApiTags('webhooks')
@Controller()
export class TestWebhookController {
  constructor(private readonly commands: CommandBus) {}

  @Post('webhooks/indexing/test')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Send a synthetic test event now (test: true, id test_document); creates no delivery record' })
  async test(@Req() req: FastifyRequest) {
    return this.commands.execute(new TestWebhook(callerOf(req)));
  }
}
