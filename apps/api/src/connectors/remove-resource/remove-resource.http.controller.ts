import { Controller, Delete, HttpCode, Param, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { RESOURCE_OR_CONNECTOR_NOT_FOUND } from '../connector-errors';
import { ContentPolicyQuery } from '../content-policy.query.dto';
import { RemoveResource } from './remove-resource.handler';
import { RemoveResourceResponse } from './remove-resource.response.dto';

@ApiTags('connectors')
@Controller()
export class RemoveResourceController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('connectors/:id/resources/:resource_id')
  @HttpCode(202)
  @ApiOperation({ summary: 'Stop syncing a resource; ?content=delete (default) deletes its synced documents, keep leaves them' })
  @ApiParam({ name: 'resource_id', description: 'URL-encoded (public.orders; a slash is %2F)' })
  @ApiEnvelopedResponse(RemoveResourceResponse, 202, 'Accepted: the resource is removed; its documents are handled after this answer')
  @ApiErrorResponses(400, 401, RESOURCE_OR_CONNECTOR_NOT_FOUND)
  async remove(@Req() req: FastifyRequest, @Param('id') id: string, @Param('resource_id') resourceId: string, @Query() query: ContentPolicyQuery) {
    return this.commands.execute(new RemoveResource(callerOf(req), id, resourceId, query.content));
  }
}
