import { Controller, Get, Param, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { DiscoverResources } from './discover-resources.handler';
import { DiscoverResourcesResponse } from './discover-resources.response.dto';

@ApiTags('connectors')
@Controller()
export class DiscoverResourcesController {
  constructor(private readonly queries: QueryBus) {}

  @Get('connectors/:id/discover')
  @ApiOperation({ summary: 'What the credentials can reach now (asked of the provider)' })
  @ApiEnvelopedResponse(DiscoverResourcesResponse)
  @ApiErrorResponses(
    [400, 'CONNECTOR_TARGET_FORBIDDEN, CONNECTOR_CONFIGURATION_INVALID, UNSUPPORTED_API_VERSION'],
    401,
    CONNECTOR_NOT_FOUND,
    [422, 'CONNECTOR_CREDENTIALS_REFUSED: the provider refused the stored credentials (PATCH new ones)'],
    [503, 'CONNECTOR_UNREACHABLE: the provider could not be reached or did not answer in time'],
  )
  async discover(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.queries.execute(new DiscoverResources(callerOf(req), id));
  }
}
