import { Controller, Get, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { ListProviders } from './list-providers.handler';
import { ListProvidersQuery } from './list-providers.request.dto';
import { ListProvidersResponse } from './list-providers.response.dto';

@ApiTags('connectors')
@Controller()
export class ListProvidersController {
  constructor(private readonly queries: QueryBus) {}

  @Get('connectors/providers')
  @ApiOperation({ summary: 'The providers a connector can connect; ?id= describes one: credential fields, filterable_fields, resource options, permission capture' })
  @ApiEnvelopedResponse(ListProvidersResponse)
  @ApiErrorResponses(400, 401, [404, 'PROVIDER_NOT_FOUND: no provider of that id'])
  async list(@Query() query: ListProvidersQuery) {
    return this.queries.execute(new ListProviders(query.id));
  }
}
