import { Controller, Get, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { addDeprecation, contextOf } from '../../http/request-context';
import { ListDatabases } from './list-databases.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { ListDatabasesResponse, ListTenantsResponse } from './list-databases.response.dto';

@ApiTags('databases')
@Controller()
export class ListDatabasesController {
  constructor(private readonly queries: QueryBus) {}

  @Get('databases')
  @ApiOperation({ summary: 'List the databases of the organization that this key can reach' })
  @ApiEnvelopedResponse(ListDatabasesResponse)
  @ApiErrorResponses(400, 401)
  async list(@Req() req: FastifyRequest) {
    const dbs = await this.queries.execute(new ListDatabases(callerOf(req)));
    return {
      databases: dbs.map((d) => ({
        database: d.name,
        status: d.status,
        provisioned: d.status === 'ready',
        metadata_schema: d.metadataSchema,
        embedder: { model: d.embedder.modelId, dimensions: d.embedder.dimensions },
        created_at: d.createdAt,
      })),
      count: dbs.length,
    };
  }

  @Get('tenants')
  @ApiOperation({ summary: 'Deprecated alias of GET /databases (original SDK shape)', deprecated: true })
  @ApiEnvelopedResponse(ListTenantsResponse)
  @ApiErrorResponses(400, 401)
  async listTenants(@Req() req: FastifyRequest) {
    addDeprecation(contextOf(req), '/tenants', '/databases');
    const dbs = await this.queries.execute(new ListDatabases(callerOf(req)));
    return { tenant_ids: dbs.map((d) => d.name), failed_tenant_ids: [], message: `${dbs.length} tenant(s)` };
  }
}
