import { Controller, Get, Param, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { ConnectorResourcesResponse } from '../connector.response.dto';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { ListResources } from './list-resources.handler';

@ApiTags('connectors')
@Controller()
export class ListResourcesController {
  constructor(private readonly queries: QueryBus) {}

  @Get('connectors/:id/resources')
  @ApiOperation({ summary: "Each configured resource's settings; custom_instructions is absent when the resource inherits the connector's" })
  @ApiEnvelopedResponse(ConnectorResourcesResponse)
  @ApiErrorResponses(400, 401, CONNECTOR_NOT_FOUND)
  async list(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.queries.execute(new ListResources(callerOf(req), id));
  }
}
