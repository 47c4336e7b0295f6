import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { SyncConnector } from './sync-connector.handler';
import { SyncConnectorResponse } from './sync-connector.response.dto';

@ApiTags('connectors')
@Controller()
export class SyncConnectorController {
  constructor(private readonly commands: CommandBus) {}

  @Post('connectors/:id/sync')
  @HttpCode(202)
  @ApiOperation({ summary: 'Sync now (every configured resource); runs on a paused connector too, which stays paused' })
  @ApiEnvelopedResponse(SyncConnectorResponse, 202, 'Accepted: the sync was requested')
  @ApiErrorResponses(400, 401, CONNECTOR_NOT_FOUND, [409, 'CONNECTOR_NOT_CONFIGURED: the connector has no resources yet'])
  async sync(@Req() req: FastifyRequest, @Param('id') id: string) {
    return this.commands.execute(new SyncConnector(callerOf(req), id));
  }
}
