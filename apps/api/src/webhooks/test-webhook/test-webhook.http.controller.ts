import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { TestWebhook } from './test-webhook.handler';
import { ApiDirectResponse, ApiErrorResponses } from '../../http/openapi';
import { TestWebhookResponse } from './test-webhook.response.dto';

@ApiTags('webhooks')
@Controller()
export class TestWebhookController {
  constructor(private readonly commands: CommandBus) {}

  @Post('webhooks/indexing/test')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Send a synthetic test event now (test: true, id test_document); creates no delivery record' })
  @ApiDirectResponse(TestWebhookResponse)
  @ApiErrorResponses(400, 401, [403, 'FORBIDDEN: a key limited to listed databases cannot change the webhook'], [404, 'WEBHOOK_NOT_REGISTERED'], [429, 'RATE_LIMITED: too many test events this minute; retry after the seconds in the Retry-After header'])
  async test(@Req() req: FastifyRequest) {
    return this.commands.execute(new TestWebhook(callerOf(req)));
  }
}
