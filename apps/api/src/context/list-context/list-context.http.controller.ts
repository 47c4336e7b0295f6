import { Body, Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerPrincipals } from '@crs/domain/acl';
import { invalid } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { authOf } from '../../http/auth.hook';
import { contextOf } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { BLOB_STORE, DATA_SOURCE } from '@crs/platform/tokens';
import { DatabaseDirectory } from '../../databases/database-directory';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '@crs/persistence/blob-store';
import { itemView, parseStoreType } from '../item-view';
import { inferredFrom, isListableSourceField, listItems, type ItemListFilter, type ItemRow } from '@crs/projections/items/items.queries';

const FIELDS = new Set(['database', 'tenant_id', 'collection', 'sub_tenant_id', 'type', 'ids', 'page', 'page_size', 'filters', 'include_fields', 'acl']);
const INCLUDE = new Set(['attachments', 'content', 'description', 'document_metadata', 'note', 'relations', 'tenant_metadata', 'timestamp', 'title', 'type', 'url']);
export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 100;

@ApiTags('context')
@Controller()
export class ListContextController {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly directory: DatabaseDirectory,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  @Post('context/list')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'List items of a collection: type (knowledge default | memory), ids (<=100), page (1-based), page_size (default 20, max 100), filters {tenant_metadata, additional_metadata, source_fields}, include_fields, acl (same meaning as in /query)',
  })
  async list(@Req() req: FastifyRequest, @Body() body: Record<string, unknown> | undefined) {
    const input = body ?? {};
    for (const k of Object.keys(input)) if (!FIELDS.has(k)) throw invalid(`${k} is not a list parameter`);
    const ctx = contextOf(req);
    const scope = readScope(ctx, input, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    ctx.scope.collection = collection;
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const store = parseStoreType(input.type) ?? 'knowledge';
    const page = int(input.page, 'page', 1, 1, 1_000_000);
    const pageSize = int(input.page_size, 'page_size', PAGE_SIZE_DEFAULT, 1, PAGE_SIZE_MAX);
    const include = new Set<string>();
    if (input.include_fields !== undefined) {
      if (!Array.isArray(input.include_fields)) throw invalid('include_fields must be an array');
      for (const f of input.include_fields) {
        if (typeof f !== 'string' || !INCLUDE.has(f)) throw invalid(`include_fields: '${String(f)}' is not one of ${[...INCLUDE].join(', ')}`);
        include.add(f);
      }
    }
    const caller = callerPrincipals(input.acl);

    let ids: string[] | undefined;
    if (input.ids !== undefined) {
      if (!Array.isArray(input.ids) || input.ids.length > 100 || input.ids.some((x) => typeof x !== 'string')) throw invalid('ids must be an array of at most 100 ids');
      ids = input.ids as string[];
    }
    const conditions: ItemListFilter[] = [];
    const filters = input.filters;
    if (filters !== undefined) {
      if (typeof filters !== 'object' || filters === null || Array.isArray(filters)) throw invalid('filters must be an object');
      for (const [k, v] of Object.entries(filters)) {
        if (!['tenant_metadata', 'additional_metadata', 'document_metadata', 'source_fields'].includes(k)) throw invalid(`filters.${k} is not a filter (tenant_metadata, additional_metadata, source_fields)`);
        if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(`filters.${k} must be an object`);
        if (k === 'source_fields') {
          for (const [f, val] of Object.entries(v)) {
            if (!isListableSourceField(f)) throw invalid(`filters.source_fields.${f} is not filterable (title, type, url, description)`);
            conditions.push({ sourceField: f, equals: String(val) });
          }
        } else {
          conditions.push({ metadata: k === 'tenant_metadata' ? 'metadata' : 'additional_metadata', contains: v });
        }
      }
    }
    // Inferred memories are listed under their source (inferred_content), not as memories of their own.
    const { total, rows } = await listItems(this.ds, { databaseId: db.id, collection, store, ids, caller, filters: conditions, page, pageSize });
    const totalPages = Math.max(1, Math.ceil(total / pageSize));
    const pagination = { page, page_size: pageSize, total, total_pages: totalPages, has_next: page < totalPages, has_previous: page > 1 };
    if (store === 'memory') {
      const derived = rows.length ? await inferredFrom(this.ds, db.id, collection, rows.map((r) => r.item_id)) : [];
      const user_memories = await Promise.all(
        rows.map(async (r) => {
          const mine = derived.filter((d) => d.additional_metadata?.derived_from === r.item_id);
          const inferred = mine.length ? (await Promise.all(mine.map((d) => this.content(d)))).filter(Boolean).join('\n') : null;
          return { memory_id: r.item_id, memory_content: await this.content(r), inferred_content: inferred, ...itemView(r) };
        }),
      );
      return { success: true, user_memories, total, pagination };
    }
    const sources = await Promise.all(
      rows.map(async (r) => ({ ...itemView(r), ...(include.has('content') ? { content: await this.content(r) } : {}) })),
    );
    return { success: true, sources, total, pagination };
  }

  /** The item's text as ingested (pairs as a User/Assistant transcript; files only when they are text). */
  private async content(r: ItemRow): Promise<string | null> {
    const bytes = await this.blobs.get(r.database_id, r.content_sha256).catch(() => null);
    if (!bytes) return null;
    if (r.pairs) return (JSON.parse(bytes.toString('utf8')) as { user: string; assistant: string }[]).map((p) => `User: ${p.user}\nAssistant: ${p.assistant}`).join('\n\n');
    if (r.kind === 'file' && !/^text\/|json|csv|markdown|html/.test(r.content_type)) return null;
    return bytes.toString('utf8');
  }
}

function int(v: unknown, name: string, fallback: number, min: number, max: number): number {
  if (v === undefined || v === null) return fallback;
  if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) throw invalid(`${name} must be an integer from ${min} to ${max}`);
  return v as number;
}
