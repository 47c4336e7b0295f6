import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { organizationCommandContext } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { WebhookCommands } from '../webhook-commands';

@ApiTags('webhooks')
@Controller()
export class TestWebhookController {
  constructor(private readonly commands: WebhookCommands) {}

  @Post('webhooks/indexing/test')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Send a synthetic test event now (test: true, id test_document); creates no delivery record' })
  async test(@Req() req: FastifyRequest) {
    return this.commands.test(organizationCommandContext(req, 'send a test event').orgId);
  }
}
