import { Controller, Delete, HttpCode, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { DeleteWebhook } from './delete-webhook.handler';
import { ApiDirectResponse, ApiErrorResponses } from '../../http/openapi';
import { DeleteWebhookResponse } from './delete-webhook.response.dto';

@ApiTags('webhooks')
@Controller()
export class DeleteWebhookController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('webhooks/indexing')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Delete the registration and its signing secret' })
  @ApiDirectResponse(DeleteWebhookResponse)
  @ApiErrorResponses(400, 401, [403, 'FORBIDDEN: a key limited to listed databases cannot change the webhook'])
  async remove(@Req() req: FastifyRequest) {
    return this.commands.execute(new DeleteWebhook(callerOf(req)));
  }
}
