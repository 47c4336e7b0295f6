import { Controller, Get, Inject, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { authOf } from '../../http/auth.hook';
import { addDeprecation, contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { INFRASTRUCTURE } from '../../tokens';
import type { Infrastructure } from '../../infrastructure';
import type { DatabaseRecord } from '../database-directory';
import { ScopeQuery } from '../scope-query.dto';
import { inActiveCollection } from '../../../../../projections/databases/databases.queries';

const STATUSES = ['queued', 'processing', 'graph_creation', 'completed', 'errored'];

@ApiTags('databases')
@Controller()
export class DatabaseStatsController {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  @Get('databases/stats')
  @ApiOperation({ summary: 'Load and growth: items by store and status, chunks, bytes, collections, growth per UTC day over the last 30 days (today and the 29 before)' })
  async stats(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const scope = readScope(contextOf(req), query, { requireDatabase: true });
    const db = await this.infra.directory.resolve(authOf(req), scope.database!);
    return this.compute(db, scope.collection);
  }

  @Get('tenants/stats')
  @ApiOperation({ summary: 'Deprecated alias of GET /databases/stats (original SDK shape)', deprecated: true })
  async tenantStats(@Req() req: FastifyRequest, @Query() query: ScopeQuery) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/tenants', '/databases');
    const scope = readScope(ctx, query, { requireDatabase: true });
    const db = await this.infra.directory.resolve(authOf(req), scope.database!);
    const s = await this.compute(db, scope.collection);
    return {
      tenant_id: db.name,
      knowledge_collection: { row_count: s.chunks.knowledge, dimensions: db.embedder.dimensions },
      memory_collection: { row_count: s.chunks.memory, dimensions: db.embedder.dimensions },
      message: `${s.items.total} item(s), ${s.chunks.total} chunk(s)`,
    };
  }

  private async compute(db: DatabaseRecord, collection?: string) {
    const params: unknown[] = collection ? [db.id, collection] : [db.id];
    // A collection being deleted counts no more (its rows stay until the purge has run).
    const inColl = `${collection ? 'AND collection = $2' : ''} AND ${inActiveCollection('rm_item_counts')}`;
    // rm_item_counts: the items read model's running totals per collection, store, status and UTC day created.
    const [rows, growth, collections]: [{ store: string; status: string; n: number; chunks: number; bytes: string }[], { day: string; items: number; bytes: string }[], unknown[]] = await Promise.all([
      this.infra.ds.query(
        `SELECT store, status, sum(items)::int AS n, sum(chunks)::int AS chunks, sum(bytes)::bigint AS bytes
         FROM rm_item_counts WHERE database_id = $1 ${inColl} GROUP BY store, status`,
        params,
      ),
      // Growth: whole UTC days, today and the 29 before.
      this.infra.ds.query(
        `SELECT day::text AS day, sum(items)::int AS items, sum(bytes)::bigint AS bytes
         FROM rm_item_counts WHERE database_id = $1 ${inColl} AND day > (now() AT TIME ZONE 'UTC')::date - 30 GROUP BY 1 ORDER BY 1`,
        params,
      ),
      this.infra.directory.collections(db.id),
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
