import { Body, Controller, Delete, HttpCode, Inject, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { commandContext } from '../../http/command-context';
import { authOf } from '../../http/auth.hook';
import { addDeprecation, contextOf } from '../../http/request-context';
import { readScope, scopeFromBodyAndQuery } from '../../http/scope';
import { DatabaseDirectory } from '../database-directory';
import { DatabaseCommands } from '../database-commands';
import { ScopeQuery } from '../scope-query.dto';

@ApiTags('databases')
@Controller()
export class DeleteDatabaseController {
  constructor(private readonly commands: DatabaseCommands, private readonly directory: DatabaseDirectory) {}

  @Delete('databases')
  @HttpCode(202)
  @ApiOperation({ summary: 'Permanently remove a database (asynchronous). Name in the query string or a JSON body.' })
  async remove(@Req() req: FastifyRequest, @Query() query: ScopeQuery, @Body() body?: ScopeQuery) {
    const name = await this.run(req, query, body);
    return { database: name, status: 'deleting', message: `Database '${name}' is being deleted` };
  }

  @Delete('tenants')
  @HttpCode(202)
  @ApiOperation({ summary: 'Deprecated alias of DELETE /databases', deprecated: true })
  async removeTenant(@Req() req: FastifyRequest, @Query() query: ScopeQuery, @Body() body?: ScopeQuery) {
    addDeprecation(contextOf(req), '/tenants', '/databases');
    const name = await this.run(req, query, body);
    return { tenant_id: name, status: 'deleting', message: `Tenant '${name}' is being deleted` };
  }

  private async run(req: FastifyRequest, query: ScopeQuery, body?: ScopeQuery): Promise<string> {
    const scope = readScope(contextOf(req), scopeFromBodyAndQuery(body, query), { requireDatabase: true });
    const db = await this.directory.resolve(authOf(req), scope.database!);
    await this.commands.requestDeletion({ ...commandContext(req), databaseId: db.id }, db.name);
    return db.name;
  }
}
