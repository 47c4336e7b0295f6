import { Controller, Get, Param, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { GetConnectorStatus } from './connector-status.handler';
import { ConnectorStatusResponse } from './connector-status.response.dto';

@ApiTags('connectors')
@Controller()
export class ConnectorStatusController {
  constructor(private readonly queries: QueryBus) {}

  @Get('connectors/:id/status')
  @ApiOperation({ summary: 'Connector and per-resource health (status) and lifecycle, with each resource\'s last sync' })
  @ApiEnvelopedResponse(ConnectorStatusResponse)
  @ApiErrorResponses(400, 401, CONNECTOR_NOT_FOUND)
  async status(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.queries.execute(new GetConnectorStatus(callerOf(req), id));
  }
}
