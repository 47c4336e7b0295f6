import { Controller, Delete, HttpCode, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { organizationCommandContext } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { WebhookCommands } from '../webhook-commands';

@ApiTags('webhooks')
@Controller()
export class DeleteSigningSecretController {
  constructor(private readonly commands: WebhookCommands) {}

  @Delete('webhooks/indexing/signing-secret')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Remove the signing secret: deliveries stop carrying signature headers' })
  async remove(@Req() req: FastifyRequest) {
    return this.commands.removeSecret(organizationCommandContext(req, 'remove the signing secret'));
  }
}
