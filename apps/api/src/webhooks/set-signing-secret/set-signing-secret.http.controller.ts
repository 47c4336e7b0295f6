import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { organizationCommandContext } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { SetSigningSecretRequest } from '../register-webhook/register-webhook.request.dto';
import { WebhookCommands } from '../webhook-commands';

@ApiTags('webhooks')
@Controller()
export class SetSigningSecretController {
  constructor(private readonly commands: WebhookCommands) {}

  @Post('webhooks/indexing/signing-secret')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Generate (no body) or supply ({signing_secret}) the signing secret; takes effect at once, also for deliveries in flight' })
  async set(@Req() req: FastifyRequest, @Body() body?: SetSigningSecretRequest) {
    return this.commands.setSecret(organizationCommandContext(req, 'set the signing secret'), body ?? {});
  }
}
