import { Controller, Delete, HttpCode, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { DeleteSigningSecret } from './delete-signing-secret.handler';
import { ApiDirectResponse, ApiErrorResponses } from '../../http/openapi';
import { DeleteSigningSecretResponse } from './delete-signing-secret.response.dto';

@ApiTags('webhooks')
@Controller()
export class DeleteSigningSecretController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('webhooks/indexing/signing-secret')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Remove the signing secret: deliveries stop carrying signature headers' })
  @ApiDirectResponse(DeleteSigningSecretResponse)
  @ApiErrorResponses(400, 401, [403, 'FORBIDDEN: a key limited to listed databases cannot change the webhook'], [404, 'WEBHOOK_NOT_REGISTERED'])
  async remove(@Req() req: FastifyRequest) {
    return this.commands.execute(new DeleteSigningSecret(callerOf(req)));
  }
}
