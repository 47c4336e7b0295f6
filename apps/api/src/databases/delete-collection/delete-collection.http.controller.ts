import { Body, Controller, Delete, HttpCode, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { callerOf } from '../../http/command-context';
import { contextOf } from '../../http/request-context';
import { readScope, scopeFromBodyAndQuery } from '../../http/scope';
import { ScopeQuery } from '../scope-query.dto';
import { DeleteCollection } from './delete-collection.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { DeleteCollectionResponse } from './delete-collection.response.dto';

@ApiTags('databases')
@Controller()
export class DeleteCollectionController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('databases/collections')
  @HttpCode(202)
  @ApiOperation({ summary: 'Permanently remove one collection and everything in it (asynchronous)' })
  @ApiEnvelopedResponse(DeleteCollectionResponse, 202, 'Accepted: the collection is being deleted')
  @ApiErrorResponses(400, 401, [404, 'DATABASE_NOT_FOUND, COLLECTION_NOT_FOUND'], 415)
  async remove(@Req() req: FastifyRequest, @Query() query: ScopeQuery, @Body() body?: ScopeQuery) {
    const scope = readScope(contextOf(req), scopeFromBodyAndQuery(body, query), { requireDatabase: true });
    if (!scope.collection) throw invalid('collection is required');
    const { database } = await this.commands.execute(new DeleteCollection(callerOf(req), scope.database!, scope.collection));
    return { database, collection: scope.collection, status: 'deleting', message: `Collection '${scope.collection}' is being deleted` };
  }
}
