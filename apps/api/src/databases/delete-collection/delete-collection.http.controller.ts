import { Body, Controller, Delete, HttpCode, Inject, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { commandContext } from '../../http/command-context';
import { authOf } from '../../http/auth.hook';
import { contextOf } from '../../http/request-context';
import { readScope, scopeFromBodyAndQuery } from '../../http/scope';
import { DatabaseDirectory } from '../database-directory';
import { DatabaseCommands } from '../database-commands';
import { ScopeQuery } from '../scope-query.dto';

@ApiTags('databases')
@Controller()
export class DeleteCollectionController {
  constructor(private readonly commands: DatabaseCommands, private readonly directory: DatabaseDirectory) {}

  @Delete('databases/collections')
  @HttpCode(202)
  @ApiOperation({ summary: 'Permanently remove one collection and everything in it (asynchronous)' })
  async remove(@Req() req: FastifyRequest, @Query() query: ScopeQuery, @Body() body?: ScopeQuery) {
    const scope = readScope(contextOf(req), scopeFromBodyAndQuery(body, query), { requireDatabase: true });
    if (!scope.collection) throw invalid('collection is required');
    const db = await this.directory.resolve(authOf(req), scope.database!);
    await this.commands.onDatabase(commandContext(req), db.id, { type: 'RequestCollectionDeletion', databaseId: db.id, collection: scope.collection });
    return { database: db.name, collection: scope.collection, status: 'deleting', message: `Collection '${scope.collection}' is being deleted` };
  }
}
