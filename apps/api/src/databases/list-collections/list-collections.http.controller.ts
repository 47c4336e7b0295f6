import { Controller, Get, Query, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { addDeprecation, contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { ScopeQuery } from '../scope-query.dto';
import { ListCollections } from './list-collections.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { ListCollectionsResponse, ListSubTenantsResponse } from './list-collections.response.dto';

@ApiTags('databases')
@Controller()
export class ListCollectionsController {
  constructor(private readonly queries: QueryBus) {}

  @Get('databases/collections')
  @ApiOperation({ summary: 'List the active collections of a database' })
  @ApiEnvelopedResponse(ListCollectionsResponse)
  @ApiErrorResponses(400, 401, 404)
  async list(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const scope = readScope(contextOf(req), query, { requireDatabase: true });
    const { database, collections } = await this.queries.execute(new ListCollections(callerOf(req), scope.database!));
    return { database, collections: collections.map((c) => ({ collection: c.name, created_at: c.createdAt })), count: collections.length };
  }

  @Get('tenants/sub-tenants')
  @ApiOperation({ summary: 'Deprecated alias of GET /databases/collections (original SDK shape)', deprecated: true })
  @ApiEnvelopedResponse(ListSubTenantsResponse)
  @ApiErrorResponses(400, 401, 404)
  async listSubTenants(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/tenants', '/databases');
    const scope = readScope(ctx, query, { requireDatabase: true });
    const { collections } = await this.queries.execute(new ListCollections(callerOf(req), scope.database!));
    return { sub_tenant_ids: collections.map((c) => c.name), message: `${collections.length} sub-tenant(s)` };
  }
}
