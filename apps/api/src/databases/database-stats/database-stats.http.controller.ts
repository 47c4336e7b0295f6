import { Controller, Get, Inject, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { authOf } from '../../http/auth.hook';
import { addDeprecation, contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { DatabaseDirectory, type DatabaseRecord } from '../database-directory';
import type { DataSource } from 'typeorm';
import { ScopeQuery } from '../scope-query.dto';
import { itemGrowth, itemTotals } from '@crs/projections/items/items.queries';

const STATUSES = ['queued', 'processing', 'graph_creation', 'completed', 'errored'];

@ApiTags('databases')
@Controller()
export class DatabaseStatsController {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource, private readonly directory: DatabaseDirectory) {}

  @Get('databases/stats')
  @ApiOperation({ summary: 'Load and growth: items by store and status, chunks, bytes, collections, growth per UTC day over the last 30 days (today and the 29 before)' })
  async stats(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const scope = readScope(contextOf(req), query, { requireDatabase: true });
    const db = await this.directory.resolve(authOf(req), scope.database!);
    return this.compute(db, scope.collection);
  }

  @Get('tenants/stats')
  @ApiOperation({ summary: 'Deprecated alias of GET /databases/stats (original SDK shape)', deprecated: true })
  async tenantStats(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/tenants', '/databases');
    const scope = readScope(ctx, query, { requireDatabase: true });
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const s = await this.compute(db, scope.collection);
    return {
      tenant_id: db.name,
      knowledge_collection: { row_count: s.chunks.knowledge, dimensions: db.embedder.dimensions },
      memory_collection: { row_count: s.chunks.memory, dimensions: db.embedder.dimensions },
      message: `${s.items.total} item(s), ${s.chunks.total} chunk(s)`,
    };
  }

  private async compute(db: DatabaseRecord, collection?: string) {
    // From the items read model's running totals; a collection being deleted counts no more.
    const [rows, growth, collections] = await Promise.all([
      itemTotals(this.ds, db.id, collection),
      // Growth: whole UTC days, today and the 29 before.
      itemGrowth(this.ds, db.id, collection),
      this.directory.collections(db.id),
    ]);
    const byStore = (store: string) => {
      const mine = rows.filter((r) => r.store === store);
      return {
        total: mine.reduce((a, r) => a + r.n, 0),
        by_status: Object.fromEntries(STATUSES.map((s) => [s, mine.find((r) => r.status === s)?.n ?? 0])),
        chunks: mine.reduce((a, r) => a + r.chunks, 0),
        bytes: mine.reduce((a, r) => a + Number(r.bytes), 0),
      };
    };
    const memory = byStore('memory');
    const knowledge = byStore('knowledge');
    return {
      database: db.name,
      ...(collection ? { collection } : {}),
      items: { total: memory.total + knowledge.total, memory, knowledge },
      chunks: { memory: memory.chunks, knowledge: knowledge.chunks, total: memory.chunks + knowledge.chunks },
      bytes: memory.bytes + knowledge.bytes,
      collections: collections.length,
      embedder: { model: db.embedder.modelId, dimensions: db.embedder.dimensions },
      growth: growth.map((g) => ({ date: g.day, items: g.items, bytes: Number(g.bytes) })),
    };
  }
}
