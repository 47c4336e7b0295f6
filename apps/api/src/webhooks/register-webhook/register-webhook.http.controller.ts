import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { RegisterWebhookRequest } from './register-webhook.request.dto';
import { RegisterWebhook } from './register-webhook.handler';
import { ApiDirectResponse, ApiErrorResponses } from '../../http/openapi';
import { RegisterWebhookResponse } from './register-webhook.response.dto';

@ApiTags('webhooks')
@Controller()
export class RegisterWebhookController {
  constructor(private readonly commands: CommandBus) {}

  @Post('webhooks/indexing')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: "Register (or replace) the organization's indexing webhook; returned directly, not in the envelope" })
  @ApiDirectResponse(RegisterWebhookResponse)
  @ApiErrorResponses([400, 'INVALID_INPUT, WEBHOOK_URL_INVALID, WEBHOOK_URL_BLOCKED, UNSUPPORTED_API_VERSION'], 401, [403, 'FORBIDDEN: a key limited to listed databases cannot change the webhook'], 413, 415, [422, 'SIGNING_SECRET_CONFLICT: generate_signing_secret together with signing_secret'])
  async register(@Req() req: FastifyRequest, @Body() body?: RegisterWebhookRequest) {
    return this.commands.execute(new RegisterWebhook(callerOf(req), body ?? {}));
  }
}
