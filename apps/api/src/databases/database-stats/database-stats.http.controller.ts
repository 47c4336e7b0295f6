import { Controller, Get, Query, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { addDeprecation, contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { ScopeQuery } from '../scope-query.dto';
import { GetDatabaseStats } from './database-stats.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { DatabaseStatsResponse, TenantStatsResponse } from './database-stats.response.dto';

@ApiTags('databases')
@Controller()
export class DatabaseStatsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('databases/stats')
  @ApiOperation({ summary: 'Load and growth: items by store and status, chunks, bytes, collections, growth per UTC day over the last 30 days (today and the 29 before)' })
  @ApiEnvelopedResponse(DatabaseStatsResponse)
  @ApiErrorResponses(400, 401, 404)
  async stats(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const scope = readScope(contextOf(req), query, { requireDatabase: true });
    return this.queries.execute(new GetDatabaseStats(callerOf(req), scope.database!, scope.collection));
  }

  @Get('tenants/stats')
  @ApiOperation({ summary: 'Deprecated alias of GET /databases/stats (original SDK shape)', deprecated: true })
  @ApiEnvelopedResponse(TenantStatsResponse)
  @ApiErrorResponses(400, 401, 404)
  async tenantStats(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/tenants', '/databases');
    const scope = readScope(ctx, query, { requireDatabase: true });
    const s = await this.queries.execute(new GetDatabaseStats(callerOf(req), scope.database!, scope.collection));
    return {
      tenant_id: s.database,
      knowledge_collection: { row_count: s.chunks.knowledge, dimensions: s.embedder.dimensions },
      memory_collection: { row_count: s.chunks.memory, dimensions: s.embedder.dimensions },
      message: `${s.items.total} item(s), ${s.chunks.total} chunk(s)`,
    };
  }
}
