import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { ConfigureConnector } from './configure-connector.handler';
import { ConfigureConnectorRequest } from './configure-connector.request.dto';
import { ConfigureConnectorResponse } from './configure-connector.response.dto';

@ApiTags('connectors')
@Controller()
export class ConfigureConnectorController {
  constructor(private readonly commands: CommandBus) {}

  @Post('connectors/:id/configure')
  @HttpCode(200)
  @ApiOperation({ summary: 'Activate resources and start their first sync; resources not listed are untouched, listed ones keep their sync position, instructions and access rule unless sent' })
  @ApiEnvelopedResponse(ConfigureConnectorResponse)
  @ApiErrorResponses([400, 'INVALID_INPUT (a missing name or resource_type, a resource listed twice, instructions over 4,000 characters, a malformed principal, metadata outside the schema); nothing is changed'], 401, CONNECTOR_NOT_FOUND, 413, 415)
  async configure(@Req() req: FastifyRequest, @Param('id') id: string, @Body() body: ConfigureConnectorRequest) {
    return this.commands.execute(new ConfigureConnector(callerOf(req), id, body.resources));
  }
}
