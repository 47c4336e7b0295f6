import { Controller, Get, Param, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { ConnectorResponse } from '../connector.response.dto';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { GetConnector } from './get-connector.handler';

@ApiTags('connectors')
@Controller()
export class GetConnectorController {
  constructor(private readonly queries: QueryBus) {}

  @Get('connectors/:id')
  @ApiOperation({ summary: 'A connector\'s settings, custom_instructions included (credentials shown as "***"), status and lifecycle' })
  @ApiEnvelopedResponse(ConnectorResponse)
  @ApiErrorResponses(400, 401, CONNECTOR_NOT_FOUND)
  async get(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.queries.execute(new GetConnector(callerOf(req), id));
  }
}
