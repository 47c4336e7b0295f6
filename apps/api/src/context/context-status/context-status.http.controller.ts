import { Body, Controller, Get, HttpCode, Post, Query, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid, notFound } from '@crs/domain/errors';
import { callerOf } from '../../http/command-context';
import { LegacyResponse } from '../../http/envelope.interceptor';
import { addDeprecation, contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { foundEntries } from '../item-status';
import { GetContextStatus } from './context-status.handler';
import { VerifyProcessingRequest } from './verify-processing.request.dto';
import { ApiEnvelopedResponse, ApiErrorResponses, ApiLegacyResponse, ApiScopeQuery } from '../../http/openapi';
import { ContextStatusResponse, VerifyProcessingResponse } from './context-status.response.dto';

/**
 * The ids a request names. A list parameter (`ids`, ...) may also be comma-separated; a single `id` is taken whole, so
 * an id holding a comma (accepted at ingest) has a status too (the SDK sends `context.status({id})` as `?id=`).
 */
function requestedIds(single: unknown[], lists: unknown[]): string[] {
  const ids: unknown[] = [];
  const text = (x: unknown): string => {
    if (typeof x !== 'string') throw invalid('ids must be strings');
    return x;
  };
  for (const v of single) if (v !== undefined && v !== null) ids.push(...(Array.isArray(v) ? v : [v]));
  for (const v of lists) if (v !== undefined && v !== null) for (const x of Array.isArray(v) ? v : [v]) ids.push(...text(x).split(',').filter(Boolean));
  // The handler checks each id (a non-empty string of at most 256 characters).
  return ids as string[];
}

@ApiTags('context')
@Controller()
export class ContextStatusController {
  constructor(private readonly queries: QueryBus) {}

  @Get('context/status')
  @ApiOperation({ summary: 'Indexing status of items: ?database=&id=<id> or repeated &ids=<a>&ids=<b> (comma-separated also accepted), optional collection' })
  @ApiScopeQuery({ collection: 'Only items of this collection' })
  @ApiQuery({ name: 'id', required: false, type: String, description: 'One item id, taken whole (it may hold a comma); the status fields are then also at the top of data' })
  @ApiQuery({ name: 'ids', required: false, schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true, description: 'Item ids: repeated, or comma-separated' })
  @ApiEnvelopedResponse(ContextStatusResponse)
  @ApiErrorResponses(400, 401, [404, 'DATABASE_NOT_FOUND; ITEM_NOT_FOUND when a single id names no item'])
  async status(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    for (const k of Object.keys(query)) if (!['id', 'ids', 'database', 'tenant_id', 'collection', 'sub_tenant_id'].includes(k)) throw invalid(`${k} is not a status parameter`);
    const ctx = contextOf(req);
    const scope = readScope(ctx, query, { requireDatabase: true });
    const { ids, statuses } = await this.queries.execute(new GetContextStatus(callerOf(req), scope.database!, requestedIds([query.id], [query.ids]), scope.collection));
    if (ids.length === 1) echoSourceType(ctx, foundEntries(statuses));
    if (ids.length === 1 && query.ids === undefined) {
      if (statuses[0].indexing_status === 'not_found') throw notFound('ITEM_NOT_FOUND', `no item with id '${ids[0]}'`);
      return { ...statuses[0], statuses };
    }
    return { statuses };
  }

  @Post('ingestion/verify_processing')
  @HttpCode(200)
  @LegacyResponse()
  @ApiOperation({ summary: 'Legacy: synchronous status of one or more source ids (JSON {database|tenant_id, file_ids|source_ids|ids}, or the same as query parameters)', deprecated: true })
  @ApiLegacyResponse(VerifyProcessingResponse)
  @ApiErrorResponses(400, 401, 404, 415)
  async verify(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>, @Body() body: VerifyProcessingRequest) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/ingestion/verify_processing', '/context/status');
    // The body's fields win over the query string's (a validated body has every declared key, undefined when not sent).
    const sent = Object.fromEntries(Object.entries(body ?? {}).filter(([, v]) => v !== undefined));
    const input: Record<string, unknown> = { ...(query ?? {}), ...sent };
    const scope = readScope(ctx, input, { requireDatabase: true });
    const ids = requestedIds([input.file_id, input.id], [input.file_ids, input.source_ids, input.ids]);
    const { ids: asked, statuses } = await this.queries.execute(new GetContextStatus(callerOf(req), scope.database!, ids, scope.collection));
    if (asked.length === 1) echoSourceType(ctx, foundEntries(statuses));
    return {
      success: true,
      statuses: statuses.map((s) => ({ ...s, file_id: s.id, source_id: s.id })),
      message: `${statuses.filter((s) => s.indexing_status === 'completed').length} of ${statuses.length} completed`,
    };
  }
}
