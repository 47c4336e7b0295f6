import { Controller, Get, Inject, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { authOf } from '../../http/auth.hook';
import { addDeprecation, contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { DatabaseDirectory } from '../database-directory';
import { ScopeQuery } from '../scope-query.dto';

@ApiTags('databases')
@Controller()
export class DatabaseStatusController {
  constructor(private readonly directory: DatabaseDirectory) {}

  @Get('databases/status')
  @ApiOperation({ summary: 'Provisioning readiness: four flags that turn true as each part is really provisioned' })
  async status(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const scope = readScope(contextOf(req), query, { requireDatabase: true });
    const db = await this.directory.resolve(authOf(req), scope.database!);
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
  async tenantStatus(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/tenants', '/databases');
    const scope = readScope(ctx, query, { requireDatabase: true });
    const auth = authOf(req);
    const db = await this.directory.resolve(auth, scope.database!);
    const f = db.flags;
    const ready = f.scheduler_status && f.graph_status && f.vectorstore_status.knowledge && f.vectorstore_status.memories;
    return { tenant_id: db.name, org_id: auth.orgId, infra: { ...f, ready_for_ingestion: ready }, message: ready ? 'ready' : 'provisioning' };
  }
}
