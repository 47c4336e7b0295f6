import { characterLength } from '@crs/domain/text-length';
import { Body, Controller, Get, HttpCode, Inject, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid, notFound } from '@crs/domain/errors';
import { authOf } from '../../http/auth.hook';
import { LegacyResponse } from '../../http/envelope.interceptor';
import { addDeprecation, contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { DatabaseDirectory } from '../../databases/database-directory';
import type { DataSource } from 'typeorm';
import { foundEntries, itemStatuses } from '../item-status';

const MAX_IDS = 100;

/**
 * The ids asked for. A list parameter (`ids`, ...) may also be comma-separated; a single `id` is taken whole, so an id
 * holding a comma (accepted at ingest) has a status too (the SDK sends `context.status({id})` as `?id=`).
 */
function idList(single: unknown[], lists: unknown[]): string[] {
  const ids: string[] = [];
  const check = (x: unknown): string => {
    if (typeof x !== 'string' || x.length === 0 || characterLength(x) > 256) throw invalid('ids must be non-empty strings of at most 256 characters');
    return x;
  };
  const text = (x: unknown): string => {
    if (typeof x !== 'string') throw invalid('ids must be strings');
    return x;
  };
  for (const v of single) if (v !== undefined && v !== null) for (const x of Array.isArray(v) ? v : [v]) ids.push(check(x));
  for (const v of lists) if (v !== undefined && v !== null) for (const x of Array.isArray(v) ? v : [v]) ids.push(...text(x).split(',').filter(Boolean).map(check));
  const unique = [...new Set(ids)];
  if (!unique.length) throw invalid('id (or ids) is required');
  if (unique.length > MAX_IDS) throw invalid(`at most ${MAX_IDS} ids per request`);
  return unique;
}

@ApiTags('context')
@Controller()
export class ContextStatusController {
  constructor(private readonly directory: DatabaseDirectory, @Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  @Get('context/status')
  @ApiOperation({ summary: 'Indexing status of items: ?database=&id=<id> or repeated &ids=<a>&ids=<b> (comma-separated also accepted), optional collection' })
  async status(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    for (const k of Object.keys(query)) if (!['id', 'ids', 'database', 'tenant_id', 'collection', 'sub_tenant_id'].includes(k)) throw invalid(`${k} is not a status parameter`);
    const ctx = contextOf(req);
    const scope = readScope(ctx, query, { requireDatabase: true });
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const ids = idList([query.id], [query.ids]);
    const statuses = await itemStatuses(this.ds, db.id, ids, scope.collection);
    if (ids.length === 1) echoSourceType(ctx, foundEntries(statuses));
    if (ids.length === 1 && query.ids === undefined) {
      if (statuses[0].indexing_status === 'not_found') throw notFound('ITEM_NOT_FOUND', `no item with id '${ids[0]}'`);
      return { ...statuses[0], statuses };
    }
    return { statuses };
  }

  @Post('ingestion/verify_processing')
  @HttpCode(200)
  @LegacyResponse()
  @ApiOperation({ summary: 'Legacy: synchronous status of one or more source ids (JSON {database|tenant_id, file_ids|source_ids|ids}, or the same as query parameters)', deprecated: true })
  async verify(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>, @Body() body?: Record<string, unknown>) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/ingestion/verify_processing', '/context/status');
    const input = { ...(query ?? {}), ...(body ?? {}) };
    const scope = readScope(ctx, input, { requireDatabase: true });
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const ids = idList([input.file_id, input.id], [input.file_ids, input.source_ids, input.ids]);
    const statuses = await itemStatuses(this.ds, db.id, ids, scope.collection);
    if (ids.length === 1) echoSourceType(ctx, foundEntries(statuses));
    return {
      success: true,
      statuses: statuses.map((s) => ({ ...s, file_id: s.id, source_id: s.id })),
      message: `${statuses.filter((s) => s.indexing_status === 'completed').length} of ${statuses.length} completed`,
    };
  }
}
