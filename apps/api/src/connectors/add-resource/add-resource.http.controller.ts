import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { ResourceInputDto } from '../resource-input';
import { AddResource } from './add-resource.handler';
import { AddResourceResponse } from './add-resource.response.dto';

@ApiTags('connectors')
@Controller()
export class AddResourceController {
  constructor(private readonly commands: CommandBus) {}

  @Post('connectors/:id/resources')
  @HttpCode(200)
  @ApiOperation({ summary: 'Add one resource; on an existing resource_id, replace it whole: omitted fields are cleared and it syncs again from the beginning' })
  @ApiEnvelopedResponse(AddResourceResponse)
  @ApiErrorResponses([400, 'INVALID_INPUT (a missing name or resource_type, instructions over 4,000 characters, a malformed principal, metadata outside the schema); nothing is changed'], 401, CONNECTOR_NOT_FOUND, 413, 415)
  async add(@Req() req: FastifyRequest, @Param('id') id: string, @Body() body: ResourceInputDto) {
    return this.commands.execute(new AddResource(callerOf(req), id, body));
  }
}
