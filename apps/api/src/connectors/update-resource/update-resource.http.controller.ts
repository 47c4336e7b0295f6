import { Body, Controller, Param, Patch, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { ResourceResponse } from '../connector.response.dto';
import { RESOURCE_OR_CONNECTOR_NOT_FOUND } from '../connector-errors';
import { UpdateResource } from './update-resource.handler';
import { UpdateResourceRequest } from './update-resource.request.dto';

@ApiTags('connectors')
@Controller()
export class UpdateResourceController {
  constructor(private readonly commands: CommandBus) {}

  @Patch('connectors/:id/resources/:resource_id')
  @ApiOperation({ summary: "Change one resource's custom_instructions and/or acl; only the fields sent change" })
  @ApiParam({ name: 'resource_id', description: 'URL-encoded (public.orders; a slash is %2F)' })
  @ApiEnvelopedResponse(ResourceResponse)
  @ApiErrorResponses([400, 'INVALID_INPUT (instructions over 4,000 characters, a malformed principal); nothing is changed'], 401, RESOURCE_OR_CONNECTOR_NOT_FOUND, 413, 415)
  async update(@Req() req: FastifyRequest, @Param('id') id: string, @Param('resource_id') resourceId: string, @Body() body: UpdateResourceRequest) {
    return this.commands.execute(new UpdateResource(callerOf(req), id, resourceId, { customInstructions: body.custom_instructions, acl: body.acl }));
  }
}
