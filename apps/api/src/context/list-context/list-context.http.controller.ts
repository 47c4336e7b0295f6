import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { callerOf } from '../../http/command-context';
import { contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { ListContextRequest } from './list-context.request.dto';
import { ListContext } from './list-context.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { ListContextResponse } from './list-context.response.dto';

@ApiTags('context')
@Controller()
export class ListContextController {
  constructor(private readonly queries: QueryBus) {}

  @Post('context/list')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'List items of a collection: type (knowledge default | memory), ids (<=100), page (1-based), page_size (default 20, max 100), filters {tenant_metadata, additional_metadata, source_fields}, include_fields, acl (same meaning as in /query)',
  })
  @ApiEnvelopedResponse(ListContextResponse)
  @ApiErrorResponses(400, 401, 404, 413, 415)
  async list(@Req() req: FastifyRequest, @Body() body: ListContextRequest) {
    const ctx = contextOf(req);
    const scope = readScope(ctx, body, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    ctx.scope.collection = collection;
    const view = await this.queries.execute(
      new ListContext(callerOf(req), scope.database!, collection, {
        store: body.type,
        ids: body.ids,
        page: body.page,
        pageSize: body.page_size,
        filters: body.filters,
        includeFields: body.include_fields,
        acl: body.acl,
      }),
    );
    return { success: true, ...view };
  }
}
