import { Controller, Delete, HttpCode, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { organizationCommandContext } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { WebhookCommands } from '../webhook-commands';

@ApiTags('webhooks')
@Controller()
export class DeleteWebhookController {
  constructor(private readonly commands: WebhookCommands) {}

  @Delete('webhooks/indexing')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Delete the registration and its signing secret' })
  async remove(@Req() req: FastifyRequest) {
    return this.commands.remove(organizationCommandContext(req, 'delete the webhook'));
  }
}
