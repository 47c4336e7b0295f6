import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { organizationCommandContext } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { WebhookCommands } from '../webhook-commands';
import { RegisterWebhookRequest } from './register-webhook.request.dto';

@ApiTags('webhooks')
@Controller()
export class RegisterWebhookController {
  constructor(private readonly commands: WebhookCommands) {}

  @Post('webhooks/indexing')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: "Register (or replace) the organization's indexing webhook; returned directly, not in the envelope" })
  async register(@Req() req: FastifyRequest, @Body() body?: RegisterWebhookRequest) {
    return this.commands.register(organizationCommandContext(req, 'register the webhook'), body ?? {});
  }
}
