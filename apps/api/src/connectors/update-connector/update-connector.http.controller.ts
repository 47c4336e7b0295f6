import { Body, Controller, Param, Patch, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { ConnectorResponse } from '../connector.response.dto';
import { CONNECTOR_NOT_FOUND } from '../connector-errors';
import { UpdateConnector } from './update-connector.handler';
import { UpdateConnectorRequest } from './update-connector.request.dto';

@ApiTags('connectors')
@Controller()
export class UpdateConnectorController {
  constructor(private readonly commands: CommandBus) {}

  @Patch('connectors/:id')
  @ApiOperation({ summary: 'Change sync_interval_seconds, custom_instructions ("" clears) or credentials; only the fields sent change' })
  @ApiEnvelopedResponse(ConnectorResponse)
  @ApiErrorResponses(
    [400, 'INVALID_INPUT (instructions over 4,000 characters, interval out of bounds, a missing or unknown credential field), CONNECTOR_TARGET_FORBIDDEN, CONNECTOR_CONFIGURATION_INVALID; nothing is changed'],
    401,
    CONNECTOR_NOT_FOUND,
    413,
    415,
    [422, 'CONNECTOR_CREDENTIALS_REFUSED: the provider refused the new credentials; the old ones stay'],
    [503, 'CONNECTOR_UNREACHABLE: the provider could not be reached to check the new credentials; nothing is changed'],
  )
  async update(@Req() req: FastifyRequest, @Param('id') id: string, @Body() body: UpdateConnectorRequest) {
    return this.commands.execute(new UpdateConnector(callerOf(req), id, { syncIntervalSeconds: body.sync_interval_seconds, customInstructions: body.custom_instructions, credentials: body.credentials }));
  }
}
