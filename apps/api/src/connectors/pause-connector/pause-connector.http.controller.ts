import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { ConnectorResponse } from '../connector.response.dto';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { PauseConnector } from './pause-connector.handler';

@ApiTags('connectors')
@Controller()
export class PauseConnectorController {
  constructor(private readonly commands: CommandBus) {}

  @Post('connectors/:id/pause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Turn scheduled syncs off (a repeat changes nothing); answers the connector' })
  @ApiEnvelopedResponse(ConnectorResponse)
  @ApiErrorResponses(400, 401, CONNECTOR_NOT_FOUND)
  async pause(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.commands.execute(new PauseConnector(callerOf(req), id));
  }
}
