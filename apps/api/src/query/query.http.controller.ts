import { Body, Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { authOf } from '../http/auth.hook';
import { commandContext } from '../http/command-context';
import { LegacyResponse } from '../http/envelope.interceptor';
import { addDeprecation, contextOf } from '../http/request-context';
import { readScope } from '../http/scope';
import { DatabaseDirectory } from '../databases/database-directory';
import { QueryRequest } from './query.request.dto';
import { QueryService, queryCollections } from './query.service';

@ApiTags('query')
@Controller()
export class QueryController {
  constructor(private readonly queries: QueryService, private readonly directory: DatabaseDirectory) {}

  @Post('query')
  @HttpCode(200)
  @ApiOperation({ summary: 'Hybrid retrieval over memories and/or knowledge; returns ranked chunks' })
  async query(@Req() req: FastifyRequest, @Body() body: QueryRequest) {
    return this.run(req, body);
  }

  @Post('recall/full_recall')
  @HttpCode(200)
  @LegacyResponse()
  @ApiOperation({ summary: 'Legacy: retrieve ingested content (same request as /query; searchable from graph_creation)', deprecated: true })
  async fullRecall(@Req() req: FastifyRequest, @Body() body: QueryRequest) {
    addDeprecation(contextOf(req), '/recall/full_recall', '/query');
    return { success: true, ...(await this.run(req, body)) };
  }

  @Post('recall/recall_preferences')
  @HttpCode(200)
  @LegacyResponse()
  @ApiOperation({ summary: 'Legacy: retrieve the inferred preferences and traits (memories ingested with infer: true; searchable from graph_creation)', deprecated: true })
  async recallPreferences(@Req() req: FastifyRequest, @Body() body: QueryRequest) {
    addDeprecation(contextOf(req), '/recall/recall_preferences', '/query');
    const filters = { ...(body.metadata_filters ?? {}) } as Record<string, any>;
    filters.additional_metadata = { ...(filters.additional_metadata ?? {}), inferred_kind: ['preference', 'trait'] };
    return { success: true, ...(await this.run(req, { ...body, type: 'memory', metadata_filters: filters })) };
  }

  private async run(req: FastifyRequest, body: QueryRequest) {
    const ctx = contextOf(req);
    const scope = readScope(ctx, body, { requireDatabase: true });
    if (body.sub_tenant_ids) addDeprecation(ctx, 'sub_tenant_ids', 'collections');
    const collections = queryCollections(body, scope.collection);
    const db = await this.directory.resolve(authOf(req), scope.database!);
    if (collections.length === 1) ctx.scope.collection = collections[0];
    return this.queries.run(commandContext(req), db, body, collections);
  }
}
