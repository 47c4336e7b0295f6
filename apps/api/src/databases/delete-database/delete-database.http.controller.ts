import { Body, Controller, Delete, HttpCode, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { addDeprecation, contextOf } from '../../http/request-context';
import { readScope, scopeFromBodyAndQuery } from '../../http/scope';
import { ScopeQuery } from '../scope-query.dto';
import { DeleteDatabase } from './delete-database.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { DeleteDatabaseResponse, DeleteTenantResponse } from './delete-database.response.dto';

@ApiTags('databases')
@Controller()
export class DeleteDatabaseController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('databases')
  @HttpCode(202)
  @ApiOperation({ summary: 'Permanently remove a database (asynchronous). Name in the query string or a JSON body.' })
  @ApiEnvelopedResponse(DeleteDatabaseResponse, 202, 'Accepted: the database is being deleted')
  @ApiErrorResponses(400, 401, 404, 415)
  async remove(@Req() req: FastifyRequest, @Query() query: ScopeQuery, @Body() body?: ScopeQuery) {
    const name = await this.run(req, query, body);
    return { database: name, status: 'deleting', message: `Database '${name}' is being deleted` };
  }

  @Delete('tenants')
  @HttpCode(202)
  @ApiOperation({ summary: 'Deprecated alias of DELETE /databases', deprecated: true })
  @ApiEnvelopedResponse(DeleteTenantResponse, 202, 'Accepted: the database is being deleted')
  @ApiErrorResponses(400, 401, 404, 415)
  async removeTenant(@Req() req: FastifyRequest, @Query() query: ScopeQuery, @Body() body?: ScopeQuery) {
    addDeprecation(contextOf(req), '/tenants', '/databases');
    const name = await this.run(req, query, body);
    return { tenant_id: name, status: 'deleting', message: `Tenant '${name}' is being deleted` };
  }

  private async run(req: FastifyRequest, query: ScopeQuery, body?: ScopeQuery): Promise<string> {
    const scope = readScope(contextOf(req), scopeFromBodyAndQuery(body, query), { requireDatabase: true });
    const { name } = await this.commands.execute(new DeleteDatabase(callerOf(req), scope.database!));
    return name;
  }
}
