import { Controller, Get, Query, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { ListConnectors } from './list-connectors.handler';
import { ListConnectorsQuery } from './list-connectors.request.dto';
import { ListConnectorsResponse } from './list-connectors.response.dto';

@ApiTags('connectors')
@Controller()
export class ListConnectorsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('connectors')
  @ApiOperation({ summary: 'The connectors the key may see (of the databases it reaches), with their status, lifecycle and last sync' })
  @ApiEnvelopedResponse(ListConnectorsResponse)
  @ApiErrorResponses(400, 401, [404, 'DATABASE_NOT_FOUND: ?database= names a database that does not exist or the key cannot reach'])
  async list(@Req() req: FastifyRequest, @Query() query: ListConnectorsQuery) {
    const scope = readScope(contextOf(req), query, { requireDatabase: false });
    return this.queries.execute(new ListConnectors(callerOf(req), scope.database));
  }
}
