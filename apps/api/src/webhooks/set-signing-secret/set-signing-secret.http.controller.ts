import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { SetSigningSecretRequest } from './set-signing-secret.request.dto';
import { SetSigningSecret } from './set-signing-secret.handler';
import { ApiDirectResponse, ApiErrorResponses } from '../../http/openapi';
import { SetSigningSecretResponse } from './set-signing-secret.response.dto';

@ApiTags('webhooks')
@Controller()
export class SetSigningSecretController {
  constructor(private readonly commands: CommandBus) {}

  @Post('webhooks/indexing/signing-secret')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Generate (no body) or supply ({signing_secret}) the signing secret; takes effect at once, also for deliveries in flight' })
  @ApiDirectResponse(SetSigningSecretResponse)
  @ApiErrorResponses(400, 401, [403, 'FORBIDDEN: a key limited to listed databases cannot change the webhook'], [404, 'WEBHOOK_NOT_REGISTERED'], 413, 415, [422, 'SIGNING_SECRET_CONFLICT: generate_signing_secret together with signing_secret'])
  async set(@Req() req: FastifyRequest, @Body() body?: SetSigningSecretRequest) {
    return this.commands.execute(new SetSigningSecret(callerOf(req), body ?? {}));
  }
}
