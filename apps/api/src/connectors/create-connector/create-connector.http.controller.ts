import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { CreateConnector } from './create-connector.handler';
import { CreateConnectorRequest } from './create-connector.request.dto';
import { CreateConnectorResponse } from './create-connector.response.dto';

@ApiTags('connectors')
@Controller()
export class CreateConnectorController {
  constructor(private readonly commands: CommandBus) {}

  @Post('connectors')
  @HttpCode(201)
  @ApiOperation({ summary: 'Connect one provider account to a database: the credentials are checked with the provider, then sealed (never returned)' })
  @ApiEnvelopedResponse(CreateConnectorResponse, 201)
  @ApiErrorResponses(
    [400, 'INVALID_INPUT (unknown provider: the message names the known ones; missing or unknown credential field; instructions over 4,000 characters; interval out of bounds), CONNECTOR_TARGET_FORBIDDEN (the credentials lead to a private, loopback or link-local address), CONNECTOR_CONFIGURATION_INVALID (credentials that cannot work as given), UNSUPPORTED_API_VERSION'],
    401,
    404,
    413,
    415,
    [422, 'CONNECTOR_CREDENTIALS_REFUSED: the provider refused the credentials (the message says what to change)'],
    [503, 'CONNECTOR_UNREACHABLE: the provider could not be reached or did not answer in time; nothing was stored'],
  )
  async create(@Req() req: FastifyRequest, @Body() body: CreateConnectorRequest) {
    const scope = readScope(contextOf(req), body, { requireDatabase: true });
    return this.commands.execute(
      new CreateConnector(callerOf(req), {
        provider: body.provider,
        database: scope.database!,
        collection: scope.collection,
        credentials: body.credentials,
        customInstructions: body.custom_instructions,
        syncIntervalSeconds: body.sync_interval_seconds,
        providerAccountScope: body.provider_account_scope,
        capturePermissions: body.capture_permissions,
      }),
    );
  }
}
