import { Controller, Get, Inject, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerPrincipals, isVisible } from '@crs/domain/acl';
import { invalid, notFound } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { entityKey } from '@crs/ingestion/graph/extract-graph';
import { authOf } from '../../http/auth.hook';
import { contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { DatabaseDirectory } from '../../databases/database-directory';
import type { DataSource } from 'typeorm';
import { parseStoreType } from '../item-view';
import { entitiesOfItems, relationsInCollection, relationsOfEntity } from '@crs/projections/graph/graph.queries';
import { servedItemsWithId } from '@crs/projections/items/items.queries';
import type { Store } from '@crs/domain/items/item.events';

const PARAMS = new Set(['database', 'tenant_id', 'collection', 'sub_tenant_id', 'id', 'type', 'limit', 'cursor', 'acl', 'entity']);

/**
 * The context graph, for inspection. Only completed items count, and with `acl` (repeatable query parameter,
 * same meaning as in /query) only items the caller may see: nothing derived from a hidden document is returned.
 * An expired memory stops surfacing anywhere, its graph included, and so does everything of a collection being
 * deleted.
 */
@ApiTags('context')
@Controller()
export class GraphController {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource, private readonly directory: DatabaseDirectory) {}

  @Get('context/relations')
  @ApiOperation({ summary: 'Graph triplets: ?database=&id=<item id, omit for the whole collection>&limit=(1-500, default 100)&cursor=<number>&acl=...' })
  async relations(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    const { db, collection, caller } = await this.scope(req, query);
    const limit = num(query.limit, 'limit', 100, 1, 500);
    const cursor = num(query.cursor, 'cursor', 0, 0, 1e9);
    const rows = await relationsInCollection(this.ds, db.id, collection, query.id !== undefined ? { id: String(query.id), store: parseStoreType(query.type) } : undefined);
    const visible = rows.filter((r) => isVisible(r.acl, caller));
    if (query.id !== undefined) echoSourceType(contextOf(req), await this.items(db.id, collection, String(query.id), caller, parseStoreType(query.type)));
    // One entry per (source, target) pair in a chunk, carrying its evidence.
    const pairs = new Map<string, { source: unknown; target: unknown; relations: unknown[]; chunk_id: string; item_id: string }>();
    for (const r of visible) {
      const chunkId = `${r.item_key}:${r.chunk_index}`;
      const key = `${chunkId}|${r.source_key}|${r.target_key}`;
      const entry = pairs.get(key) ?? { source: entity(db.id, r.source_key, r.sn, r.st), target: entity(db.id, r.target_key, r.tn, r.tt), relations: [], chunk_id: chunkId, item_id: r.item_id };
      entry.relations.push({ canonical_predicate: r.predicate, raw_predicate: r.predicate, context: r.context, confidence: null, temporal_details: null, timestamp: null, relationship_id: `${key}|${r.predicate}`, chunk_id: chunkId, source_entity_id: r.source_key, target_entity_id: r.target_key });
      pairs.set(key, entry);
    }
    const all = [...pairs.values()];
    const page = all.slice(cursor, cursor + limit);
    const truncated = cursor + limit < all.length;
    return { success: true, relations: page, is_truncated: truncated, next_cursor: truncated ? cursor + limit : null, message: `${page.length} of ${all.length} relation(s)` };
  }

  @Get('context/graph/entities')
  @ApiOperation({ summary: 'Entities mentioned by an item: ?database=&id=&collection=&acl=...' })
  async entities(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    const { db, collection, caller } = await this.scope(req, query);
    if (typeof query.id !== 'string' || !query.id) throw invalid('id is required');
    const seen = await this.items(db.id, collection, query.id, caller);
    if (!seen.length) throw notFound('ITEM_NOT_FOUND', `no item with id '${query.id}'`);
    echoSourceType(contextOf(req), seen);
    const rows = await entitiesOfItems(this.ds, db.id, seen.map((i) => i.item_key));
    return { id: query.id, entities: rows.map((r) => ({ ...entity(db.id, r.entity_key, r.name, r.type), mentions: r.mentions })) };
  }

  @Get('context/graph/neighbours')
  @ApiOperation({ summary: 'Entities related to an entity, with the relation evidence: ?database=&entity=<name>&collection=&acl=...' })
  async neighbours(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    const { db, collection, caller } = await this.scope(req, query);
    if (typeof query.entity !== 'string' || !query.entity) throw invalid('entity is required');
    const key = entityKey(query.entity);
    const rows = await relationsOfEntity(this.ds, db.id, collection, key);
    const byNeighbour = new Map<string, { entity: unknown; relations: unknown[] }>();
    for (const r of rows.filter((x) => isVisible(x.acl, caller))) {
      const [nk, nn, nt] = r.source_key === key ? [r.target_key, r.tn, r.tt] : [r.source_key, r.sn, r.st];
      const entry = byNeighbour.get(nk) ?? { entity: entity(db.id, nk, nn, nt), relations: [] };
      entry.relations.push({ predicate: r.predicate, direction: r.source_key === key ? 'out' : 'in', context: r.context, item_id: r.item_id, chunk_id: `${r.item_key}:${r.chunk_index}` });
      byNeighbour.set(nk, entry);
    }
    const neighbours = [...byNeighbour.values()].sort((a, b) => b.relations.length - a.relations.length);
    return { entity: key, neighbours, count: neighbours.length };
  }

  /** The items with this id in the collection (one per store, or the one of `store`) that are served and the caller may see. */
  private async items(databaseId: string, collection: string, id: string, caller: string[] | null, store?: Store) {
    const rows = await servedItemsWithId(this.ds, databaseId, collection, id, store);
    return rows.filter((i) => isVisible(i.acl, caller));
  }

  private async scope(req: FastifyRequest, query: Record<string, unknown>) {
    for (const k of Object.keys(query)) if (!PARAMS.has(k)) throw invalid(`${k} is not a parameter of this endpoint`);
    const ctx = contextOf(req);
    const scope = readScope(ctx, query, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const acl = query.acl === undefined ? undefined : Array.isArray(query.acl) ? query.acl : [query.acl];
    return { db, collection, caller: callerPrincipals(acl) };
  }
}

const entity = (namespace: string, key: string, name: string, type: string) => ({ name, type, namespace, entity_id: key, identifier: key });

function num(v: unknown, name: string, fallback: number, min: number, max: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw invalid(`${name} must be an integer from ${min} to ${max}`);
  return n;
}
