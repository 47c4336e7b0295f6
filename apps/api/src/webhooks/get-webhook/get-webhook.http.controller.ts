import { Controller, Get, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { GetWebhook } from './get-webhook.handler';
import { ApiDirectResponse, ApiErrorResponses } from '../../http/openapi';
import { WebhookRegistrationResponse } from './get-webhook.response.dto';

@ApiTags('webhooks')
@Controller()
export class GetWebhookController {
  constructor(private readonly queries: QueryBus) {}

  @Get('webhooks/indexing')
  @DirectResponse()
  @ApiOperation({ summary: 'The current registration (the signing secret is never returned)' })
  @ApiDirectResponse(WebhookRegistrationResponse)
  @ApiErrorResponses(400, 401)
  async get(@Req() req: FastifyRequest) {
    return this.queries.execute(new GetWebhook(callerOf(req)));
  }
}
