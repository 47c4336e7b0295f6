import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { RegisterWebhookRequest } from './register-webhook.request.dto';
import { RegisterWebhook } from './register-webhook.handler';

@ApiTags('webhooks')
@Controller()
export class RegisterWebhookController {
  constructor(private readonly commands: CommandBus) {}

  @Post('webhooks/indexing')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: "Register (or replace) the organization's indexing webhook; returned directly, not in the envelope" })
  async register(@Req() req: FastifyRequest, @Body() body?: RegisterWebhookRequest) {
    return this.commands.execute(new RegisterWebhook(callerOf(req), body ?? {}));
  }
}
