import { Controller, Delete, HttpCode, Param, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { ContentPolicyQuery } from '../content-policy.query.dto';
import { DeleteConnector } from './delete-connector.handler';
import { DeleteConnectorResponse } from './delete-connector.response.dto';

@ApiTags('connectors')
@Controller()
export class DeleteConnectorController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('connectors/:id')
  @HttpCode(202)
  @ApiOperation({ summary: 'Remove the connector: 404 from this answer on; ?content=delete (default) deletes its synced documents, keep leaves them' })
  @ApiEnvelopedResponse(DeleteConnectorResponse, 202, 'Accepted: the connector is gone from every read; its content is handled after this answer')
  @ApiErrorResponses(400, 401, CONNECTOR_NOT_FOUND, [409, 'CONNECTOR_DELETING: a deletion with the other content policy is under way (the first one stands)'])
  async remove(@Req() req: FastifyRequest, @Param('id') id: string, @Query() query: ContentPolicyQuery) {
    return this.commands.execute(new DeleteConnector(callerOf(req), id, query.content));
  }
}
