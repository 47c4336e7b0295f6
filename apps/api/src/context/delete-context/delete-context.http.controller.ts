import { Body, Controller, Delete, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { callerOf } from '../../http/command-context';
import { contextOf, echoSourceType } from '../../http/request-context';
import { readScope, scopeFromBodyAndQuery } from '../../http/scope';
import { DeleteContextRequest } from './delete-context.request.dto';
import { DeleteContext } from './delete-context.handler';
import { ApiEnvelopedResponse, ApiErrorResponses, ApiScopeQuery } from '../../http/openapi';
import { DeleteContextResponse } from './delete-context.response.dto';

const QUERY_SCOPE = ['database', 'collection', 'tenant_id', 'sub_tenant_id'];

@ApiTags('context')
@Controller()
export class DeleteContextController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('context')
  @ApiOperation({ summary: 'Delete items by id (JSON body {database, collection?, ids, type?}). Each deletion is an ItemDeleted event; chunks leave the index.' })
  @ApiScopeQuery()
  @ApiEnvelopedResponse(DeleteContextResponse)
  @ApiErrorResponses(400, 401, 404, 413, 415)
  async remove(@Req() req: FastifyRequest, @Body() body: DeleteContextRequest) {
    // The scope may come in the query string too (as on the other deletions); the two must agree.
    const query = (req.query ?? {}) as Record<string, unknown>;
    const ctx = contextOf(req);
    const scope = readScope(ctx, scopeFromBodyAndQuery(body, Object.fromEntries(QUERY_SCOPE.filter((k) => query[k] !== undefined).map((k) => [k, query[k]]))), { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    ctx.scope.collection = collection;
    const { results, sourceType } = await this.commands.execute(new DeleteContext(callerOf(req), scope.database!, collection, body.ids, body.type));
    if (sourceType !== null) echoSourceType(ctx, [{ source_type: sourceType }]);
    const deleted = results.filter((r) => r.deleted).length;
    return { success: deleted > 0, message: `${deleted} of ${results.length} deleted`, results, deleted_count: deleted, user_memory_deleted: deleted > 0 };
  }
}
