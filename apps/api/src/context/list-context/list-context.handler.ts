import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { callerPrincipals } from '@crs/domain/acl';
import { invalid } from '@crs/domain/errors';
import type { Store } from '@crs/domain/items/item.events';
import type { BlobStore } from '@crs/persistence/blob-store';
import { BLOB_STORE, DATA_SOURCE } from '@crs/platform/tokens';
import { inferredFrom, isListableSourceField, listItems, type ItemListFilter, type ItemRow } from '@crs/projections/items/items.queries';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../../databases/database-directory';
import { itemView } from '../item-view';
import { PAGE_SIZE_DEFAULT } from './list-context.request.dto';

export interface ListContextOptions {
  /** default knowledge */
  store?: Store;
  /** only these item ids */
  ids?: string[];
  /** 1-based, default 1 */
  page?: number;
  pageSize?: number;
  /** `{tenant_metadata, additional_metadata, document_metadata, source_fields}`, as sent */
  filters?: Record<string, unknown>;
  /** `content` adds each source's text */
  includeFields?: string[];
  /** principals the list runs on behalf of, as sent (same meaning as in /query) */
  acl?: string[];
}

export interface Pagination {
  page: number;
  page_size: number;
  total: number;
  total_pages: number;
  has_next: boolean;
  has_previous: boolean;
}

type ItemView = ReturnType<typeof itemView>;

export type ListContextView =
  | { user_memories: (ItemView & { memory_id: string; memory_content: string | null; inferred_content: string | null })[]; total: number; pagination: Pagination }
  | { sources: (ItemView & { content?: string | null })[]; total: number; pagination: Pagination };

/** One page of the items of a collection (one store) the caller may see, in the original SDK's shapes. */
export class ListContext extends Query<ListContextView> {
  constructor(readonly caller: Caller, readonly database: string, readonly collection: string, readonly options: ListContextOptions = {}) {
    super();
  }
}

/** From the items read model; item contents from the blob store. */
@QueryHandler(ListContext)
export class ListContextHandler implements IQueryHandler<ListContext> {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly directory: DatabaseDirectory,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  async execute({ caller, database, collection, options }: ListContext): Promise<ListContextView> {
    const db = await this.directory.resolve(caller.key, database);
    const store = options.store ?? 'knowledge';
    const page = options.page ?? 1;
    const pageSize = options.pageSize ?? PAGE_SIZE_DEFAULT;
    const include = new Set(options.includeFields ?? []);
    const principals = callerPrincipals(options.acl);
    const filters = listFilters(options.filters);
    // Inferred memories are listed under their source (inferred_content), not as memories of their own.
    const { total, rows } = await listItems(this.ds, { databaseId: db.id, collection, store, ids: options.ids, caller: principals, filters, page, pageSize });
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
      return { user_memories, total, pagination };
    }
    const sources = await Promise.all(
      rows.map(async (r) => ({ ...itemView(r), ...(include.has('content') ? { content: await this.content(r) } : {}) })),
    );
    return { sources, total, pagination };
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

/** The list's `filters` as read-model conditions: metadata containment per metadata kind, equality per source field. */
function listFilters(filters: Record<string, unknown> | undefined): ItemListFilter[] {
  const conditions: ItemListFilter[] = [];
  for (const [k, v] of Object.entries(filters ?? {})) {
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
  return conditions;
}
