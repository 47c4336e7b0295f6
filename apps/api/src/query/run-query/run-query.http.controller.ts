import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { callerOf } from '../../http/command-context';
import { LegacyResponse } from '../../http/envelope.interceptor';
import { addDeprecation, contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { QueryRequest } from './run-query.request.dto';
import { RunQuery } from './run-query.handler';
import { ApiEnvelopedResponse, ApiErrorResponses, ApiLegacyResponse } from '../../http/openapi';
import { QueryResponse, RecallResponse } from './run-query.response.dto';

@ApiTags('query')
@Controller()
export class QueryController {
  constructor(private readonly queries: QueryBus) {}

  @Post('query')
  @HttpCode(200)
  @ApiOperation({ summary: 'Hybrid retrieval over memories and/or knowledge; returns ranked chunks' })
  @ApiEnvelopedResponse(QueryResponse)
  @ApiErrorResponses(400, 401, 404, 413, 415)
  async query(@Req() req: FastifyRequest, @Body() body: QueryRequest) {
    return this.run(req, body);
  }

  @Post('recall/full_recall')
  @HttpCode(200)
  @LegacyResponse()
  @ApiOperation({ summary: 'Legacy: retrieve ingested content (same request as /query; searchable from graph_creation)', deprecated: true })
  @ApiLegacyResponse(RecallResponse)
  @ApiErrorResponses(400, 401, 404, 413, 415)
  async fullRecall(@Req() req: FastifyRequest, @Body() body: QueryRequest) {
    addDeprecation(contextOf(req), '/recall/full_recall', '/query');
    return { success: true, ...(await this.run(req, body)) };
  }

  @Post('recall/recall_preferences')
  @HttpCode(200)
  @LegacyResponse()
  @ApiOperation({ summary: 'Legacy: retrieve the inferred preferences and traits (memories ingested with infer: true; searchable from graph_creation)', deprecated: true })
  @ApiLegacyResponse(RecallResponse)
  @ApiErrorResponses(400, 401, 404, 413, 415)
  async recallPreferences(@Req() req: FastifyRequest, @Body() body: QueryRequest) {
    addDeprecation(contextOf(req), '/recall/recall_preferences', '/query');
    const filters: Record<string, unknown> = { ...(body.metadata_filters ?? {}) };
    const additional = filters.additional_metadata;
    // Anything but an object is left as sent, for the filter check to refuse.
    if (additional === undefined || (typeof additional === 'object' && additional !== null && !Array.isArray(additional))) {
      filters.additional_metadata = { ...additional, inferred_kind: ['preference', 'trait'] };
    }
    return { success: true, ...(await this.run(req, { ...body, type: 'memory', metadata_filters: filters })) };
  }

  private async run(req: FastifyRequest, body: QueryRequest) {
    const ctx = contextOf(req);
    const scope = readScope(ctx, body, { requireDatabase: true });
    if (body.sub_tenant_ids) addDeprecation(ctx, 'sub_tenant_ids', 'collections');
    const collections = queryCollections(body, scope.collection);
    if (collections.length === 1) ctx.scope.collection = collections[0];
    return this.queries.execute(new RunQuery(callerOf(req), scope.database!, collections, body));
  }
}

/** Which collections a query searches: `collections` (or legacy `sub_tenant_ids`), else `collection`, else the default one. */
export function queryCollections(body: { collections?: string[]; sub_tenant_ids?: string[] }, collection: string | undefined): string[] {
  const many = body.collections ?? body.sub_tenant_ids;
  if (many && collection) throw invalid('send collection or collections, not both');
  if (many) {
    if (many.length === 0 || many.length > 100) throw invalid('collections must list 1 to 100 collections');
    return [...new Set(many.map((c) => assertCollectionName(c, 'collections[]')))];
  }
  return [collection ? assertCollectionName(collection) : DEFAULT_COLLECTION];
}
