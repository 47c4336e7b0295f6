import { Controller, Get, Query, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../../http/command-context';
import { addDeprecation, contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { ScopeQuery } from '../scope-query.dto';
import { GetDatabaseStatus } from './database-status.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { DatabaseStatusResponse, TenantStatusResponse } from './database-status.response.dto';

@ApiTags('databases')
@Controller()
export class DatabaseStatusController {
  constructor(private readonly queries: QueryBus) {}

  @Get('databases/status')
  @ApiOperation({ summary: 'Provisioning readiness: four flags that turn true as each part is really provisioned' })
  @ApiEnvelopedResponse(DatabaseStatusResponse)
  @ApiErrorResponses(400, 401, 404)
  async status(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const scope = readScope(contextOf(req), query, { requireDatabase: true });
    const db = await this.queries.execute(new GetDatabaseStatus(callerOf(req), scope.database!));
    const f = db.flags;
    return {
      database: db.name,
      status: db.status,
      ...f,
      provisioned: f.scheduler_status && f.graph_status && f.vectorstore_status.knowledge && f.vectorstore_status.memories,
    };
  }

  @Get('tenants/status')
  @ApiOperation({ summary: 'Deprecated alias of GET /databases/status (original SDK shape: flags under infra)', deprecated: true })
  @ApiEnvelopedResponse(TenantStatusResponse)
  @ApiErrorResponses(400, 401, 404)
  async tenantStatus(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/tenants', '/databases');
    const scope = readScope(ctx, query, { requireDatabase: true });
    const caller = callerOf(req);
    const db = await this.queries.execute(new GetDatabaseStatus(caller, scope.database!));
    const f = db.flags;
    const ready = f.scheduler_status && f.graph_status && f.vectorstore_status.knowledge && f.vectorstore_status.memories;
    return { tenant_id: db.name, org_id: caller.key.orgId, infra: { ...f, ready_for_ingestion: ready }, message: ready ? 'ready' : 'provisioning' };
  }
}
