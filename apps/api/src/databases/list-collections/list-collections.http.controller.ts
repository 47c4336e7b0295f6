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
export class ListCollectionsController {
  constructor(private readonly directory: DatabaseDirectory) {}

  @Get('databases/collections')
  @ApiOperation({ summary: 'List the active collections of a database' })
  async list(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const scope = readScope(contextOf(req), query, { requireDatabase: true });
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const collections = await this.directory.collections(db.id);
    return { database: db.name, collections: collections.map((c) => ({ collection: c.name, created_at: c.createdAt })), count: collections.length };
  }

  @Get('tenants/sub-tenants')
  @ApiOperation({ summary: 'Deprecated alias of GET /databases/collections (original SDK shape)', deprecated: true })
  async listSubTenants(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/tenants', '/databases');
    const scope = readScope(ctx, query, { requireDatabase: true });
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const collections = await this.directory.collections(db.id);
    return { sub_tenant_ids: collections.map((c) => c.name), message: `${collections.length} sub-tenant(s)` };
  }
}
