import { Controller, Get, Query, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { callerOf } from '../../http/command-context';
import { contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import type { GraphScope } from './graph-reads';
import { GetRelations } from './relations.handler';
import { GetItemEntities } from './item-entities.handler';
import { GetEntityNeighbours } from './entity-neighbours.handler';
import { ApiAclQuery, ApiEnvelopedResponse, ApiErrorResponses, ApiScopeQuery } from '../../http/openapi';
import { EntityNeighboursResponse, ItemEntitiesResponse, RelationsResponse } from './graph.response.dto';

const PARAMS = new Set(['database', 'tenant_id', 'collection', 'sub_tenant_id', 'id', 'type', 'limit', 'cursor', 'acl', 'entity']);

/**
 * The context graph, for inspection. Only completed items count, and with `acl` (repeatable query parameter,
 * same meaning as in /query) only items the caller may see: nothing derived from a hidden document is returned.
 * An expired memory stops surfacing anywhere, its graph included, and so does everything of a collection being
 * deleted.
 */
@ApiTags('context')
@Controller()
export class GraphController {
  constructor(private readonly queries: QueryBus) {}

  @Get('context/relations')
  @ApiOperation({ summary: 'Graph triplets: ?database=&id=<item id, omit for the whole collection>&limit=(1-500, default 100)&cursor=<number>&acl=...' })
  @ApiScopeQuery()
  @ApiQuery({ name: 'id', required: false, type: String, description: 'An item id: its relations only (omitted: the whole collection)' })
  @ApiQuery({ name: 'type', required: false, enum: ['memory', 'knowledge'], description: 'With id, when both stores hold an item with it' })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 } })
  @ApiQuery({ name: 'cursor', required: false, schema: { type: 'integer', minimum: 0, default: 0 }, description: 'next_cursor of the previous page' })
  @ApiAclQuery()
  @ApiEnvelopedResponse(RelationsResponse)
  @ApiErrorResponses(400, 401, 404)
  async relations(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    const { view, items } = await this.queries.execute(
      new GetRelations(callerOf(req), this.scope(req, query), { id: query.id, type: query.type, limit: query.limit, cursor: query.cursor }),
    );
    if (items) echoSourceType(contextOf(req), items);
    return view;
  }

  @Get('context/graph/entities')
  @ApiOperation({ summary: 'Entities mentioned by an item: ?database=&id=&collection=&acl=...' })
  @ApiScopeQuery()
  @ApiQuery({ name: 'id', required: true, type: String, description: 'The item id' })
  @ApiAclQuery()
  @ApiEnvelopedResponse(ItemEntitiesResponse)
  @ApiErrorResponses(400, 401, [404, 'DATABASE_NOT_FOUND, ITEM_NOT_FOUND (also an item the acl may not see)'])
  async entities(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    const { view, items } = await this.queries.execute(new GetItemEntities(callerOf(req), this.scope(req, query), query.id));
    echoSourceType(contextOf(req), items);
    return view;
  }

  @Get('context/graph/neighbours')
  @ApiOperation({ summary: 'Entities related to an entity, with the relation evidence: ?database=&entity=<name>&collection=&acl=...' })
  @ApiScopeQuery()
  @ApiQuery({ name: 'entity', required: true, type: String, description: 'The entity name' })
  @ApiAclQuery()
  @ApiEnvelopedResponse(EntityNeighboursResponse)
  @ApiErrorResponses(400, 401, 404)
  async neighbours(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    return this.queries.execute(new GetEntityNeighbours(callerOf(req), this.scope(req, query), query.entity));
  }

  private scope(req: FastifyRequest, query: Record<string, unknown>): GraphScope {
    for (const k of Object.keys(query)) if (!PARAMS.has(k)) throw invalid(`${k} is not a parameter of this endpoint`);
    const scope = readScope(contextOf(req), query, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    // acl is a repeatable parameter: one value comes as a string.
    const acl = query.acl === undefined ? undefined : Array.isArray(query.acl) ? query.acl : [query.acl];
    return { database: scope.database!, collection, acl };
  }
}
