import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { callerPrincipals, isVisible } from '@crs/domain/acl';
import { invalid } from '@crs/domain/errors';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { relationsInCollection } from '@crs/projections/graph/graph.queries';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../../databases/database-directory';
import { parseStoreType } from '../item-view';
import { graphEntity, visibleItemsWithId, type GraphEntityView, type GraphScope } from './graph-reads';

/** The parameters of a relations read as sent (query string values): the handler checks them. */
export interface RelationsParams {
  /** an item id: its relations only (omitted: the whole collection) */
  id?: unknown;
  /** `memory` or `knowledge`, with `id` */
  type?: unknown;
  /** 1-500, default 100 */
  limit?: unknown;
  /** where the page starts, default 0 */
  cursor?: unknown;
}

export interface RelationPair {
  source: GraphEntityView;
  target: GraphEntityView;
  relations: unknown[];
  chunk_id: string;
  item_id: string;
}

export interface RelationsView {
  success: true;
  relations: RelationPair[];
  is_truncated: boolean;
  next_cursor: number | null;
  message: string;
}

/** One page of graph triplets of a collection (or of one item), one entry per (source, target) pair in a chunk. */
export class GetRelations extends Query<{ view: RelationsView; items?: { source_type: string }[] }> {
  constructor(readonly caller: Caller, readonly scope: GraphScope, readonly params: RelationsParams = {}) {
    super();
  }
}

/** From the graph read model; `items`, with `id`: the items of that id the caller may see. */
@QueryHandler(GetRelations)
export class GetRelationsHandler implements IQueryHandler<GetRelations> {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource, private readonly directory: DatabaseDirectory) {}

  async execute({ caller, scope, params }: GetRelations): Promise<{ view: RelationsView; items?: { source_type: string }[] }> {
    const db = await this.directory.resolve(caller.key, scope.database);
    const principals = callerPrincipals(scope.acl);
    const limit = num(params.limit, 'limit', 100, 1, 500);
    const cursor = num(params.cursor, 'cursor', 0, 0, 1e9);
    const item = params.id !== undefined ? { id: String(params.id), store: parseStoreType(params.type) } : undefined;
    const rows = await relationsInCollection(this.ds, db.id, scope.collection, item);
    const visible = rows.filter((r) => isVisible(r.acl, principals));
    const items = item ? await visibleItemsWithId(this.ds, db.id, scope.collection, item.id, principals, item.store) : undefined;
    const pairs = new Map<string, RelationPair>();
    for (const r of visible) {
      const chunkId = `${r.item_key}:${r.chunk_index}`;
      const key = `${chunkId}|${r.source_key}|${r.target_key}`;
      const entry = pairs.get(key) ?? { source: graphEntity(db.id, r.source_key, r.sn, r.st), target: graphEntity(db.id, r.target_key, r.tn, r.tt), relations: [], chunk_id: chunkId, item_id: r.item_id };
      entry.relations.push({ canonical_predicate: r.predicate, raw_predicate: r.predicate, context: r.context, confidence: null, temporal_details: null, timestamp: null, relationship_id: `${key}|${r.predicate}`, chunk_id: chunkId, source_entity_id: r.source_key, target_entity_id: r.target_key });
      pairs.set(key, entry);
    }
    const all = [...pairs.values()];
    const page = all.slice(cursor, cursor + limit);
    const truncated = cursor + limit < all.length;
    return { view: { success: true, relations: page, is_truncated: truncated, next_cursor: truncated ? cursor + limit : null, message: `${page.length} of ${all.length} relation(s)` }, items };
  }
}

function num(v: unknown, name: string, fallback: number, min: number, max: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw invalid(`${name} must be an integer from ${min} to ${max}`);
  return n;
}
