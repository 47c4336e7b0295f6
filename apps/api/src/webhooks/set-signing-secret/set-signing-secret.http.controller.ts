import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { DirectResponse } from '../../http/envelope.interceptor';
import { SetSigningSecretRequest } from './set-signing-secret.request.dto';
import { SetSigningSecret } from './set-signing-secret.handler';

@ApiTags('webhooks')
@Controller()
export class SetSigningSecretController {
  constructor(private readonly commands: CommandBus) {}

  @Post('webhooks/indexing/signing-secret')
  @HttpCode(200)
  @DirectResponse()
  @ApiOperation({ summary: 'Generate (no body) or supply ({signing_secret}) the signing secret; takes effect at once, also for deliveries in flight' })
  async set(@Req() req: FastifyRequest, @Body() body?: SetSigningSecretRequest) {
    return this.commands.execute(new SetSigningSecret(callerOf(req), body ?? {}));
  }
}
