import { Controller, Get, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { authOf } from '../../http/auth.hook';
import { DirectResponse } from '../../http/envelope.interceptor';
import { WebhookReads } from '../webhook-reads';

@ApiTags('webhooks')
@Controller()
export class GetWebhookController {
  constructor(private readonly reads: WebhookReads) {}

  @Get('webhooks/indexing')
  @DirectResponse()
  @ApiOperation({ summary: 'The current registration (the signing secret is never returned)' })
  async get(@Req() req: FastifyRequest) {
    return this.reads.registration(authOf(req).orgId, authOf(req));
  }
}
