import { Controller, Get, Inject, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { callerPrincipals, isVisible } from '../../../../../libs/domain/src/acl';
import { invalid, notFound } from '../../../../../libs/domain/src/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '../../../../../libs/domain/src/names';
import { entityKey } from '../../../../../libs/ingestion/src/graph/extract-graph';
import { authOf } from '../../http/auth.hook';
import { contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { INFRASTRUCTURE } from '../../tokens';
import type { Infrastructure } from '../../infrastructure';
import { parseStoreType } from '../item-view';
import { inActiveCollection } from '../../../../../projections/databases/databases.queries';

const PARAMS = new Set(['database', 'tenant_id', 'collection', 'sub_tenant_id', 'id', 'type', 'limit', 'cursor', 'acl', 'entity']);

interface RelationRow {
  item_key: string;
  item_id: string;
  chunk_index: number;
  source_key: string;
  target_key: string;
  predicate: string;
  context: string;
  sn: string;
  st: string;
  tn: string;
  tt: string;
  acl: string[] | null;
}

/** The item an endpoint is about (entities of an item; relations of one item id). */
interface ItemRef {
  item_key: string;
  acl: string[] | null;
  source_type: string;
}

/**
 * The context graph, for inspection. Only completed items count, and with `acl` (repeatable query parameter,
 * same meaning as in /query) only items the caller may see: nothing derived from a hidden document is returned.
 */
/**
 * An expired memory stops surfacing anywhere, its graph included, and so does everything of a collection being
 * deleted (rm_items aliased `i`).
 */
const SERVED = `(i.expires_at IS NULL OR i.expires_at > now()) AND ${inActiveCollection('i')}`;

@ApiTags('context')
@Controller()
export class GraphController {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  @Get('context/relations')
  @ApiOperation({ summary: 'Graph triplets: ?database=&id=<item id, omit for the whole collection>&limit=(1-500, default 100)&cursor=<number>&acl=...' })
  async relations(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    const { db, collection, caller } = await this.scope(req, query);
    const limit = num(query.limit, 'limit', 100, 1, 500);
    const cursor = num(query.cursor, 'cursor', 0, 0, 1e9);
    const params: unknown[] = [db.id, collection];
    let where = `r.database_id = $1 AND r.collection = $2 AND i.status = 'completed' AND ${SERVED}`;
    if (query.id !== undefined) {
      params.push(String(query.id));
      where += ` AND i.item_id = $${params.length}`;
      const store = parseStoreType(query.type);
      if (store) {
        params.push(store);
        where += ` AND i.store = $${params.length}`;
      }
    }
    const rows: RelationRow[] = await this.infra.ds.query(
      `SELECT r.item_key, i.item_id, r.chunk_index, r.source_key, r.target_key, r.predicate, r.context, s.name AS sn, s.type AS st, t.name AS tn, t.type AS tt, i.acl
       FROM rm_graph_relations r
       JOIN rm_items i ON i.database_id = r.database_id AND i.item_key = r.item_key
       JOIN rm_graph_entities s ON s.database_id = r.database_id AND s.entity_key = r.source_key
       JOIN rm_graph_entities t ON t.database_id = r.database_id AND t.entity_key = r.target_key
       WHERE ${where}
       ORDER BY r.item_key, r.chunk_index, r.source_key, r.target_key, r.predicate`,
      params,
    );
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
    const rows = await this.infra.ds.query(
      `SELECT e.entity_key, e.name, e.type, count(*)::int AS mentions FROM rm_graph_mentions m
       JOIN rm_graph_entities e ON e.database_id = m.database_id AND e.entity_key = m.entity_key
       JOIN rm_items i ON i.database_id = m.database_id AND i.item_key = m.item_key AND i.status = 'completed'
       WHERE m.database_id = $1 AND m.item_key = ANY($2) GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1`,
      [db.id, seen.map((i) => i.item_key)],
    );
    return { id: query.id, entities: rows.map((r: any) => ({ ...entity(db.id, r.entity_key, r.name, r.type), mentions: r.mentions })) };
  }

  @Get('context/graph/neighbours')
  @ApiOperation({ summary: 'Entities related to an entity, with the relation evidence: ?database=&entity=<name>&collection=&acl=...' })
  async neighbours(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    const { db, collection, caller } = await this.scope(req, query);
    if (typeof query.entity !== 'string' || !query.entity) throw invalid('entity is required');
    const key = entityKey(query.entity);
    const rows: RelationRow[] = await this.infra.ds.query(
      `SELECT r.item_key, i.item_id, r.chunk_index, r.source_key, r.target_key, r.predicate, r.context, s.name AS sn, s.type AS st, t.name AS tn, t.type AS tt, i.acl
       FROM rm_graph_relations r
       JOIN rm_items i ON i.database_id = r.database_id AND i.item_key = r.item_key AND i.status = 'completed' AND ${SERVED}
       JOIN rm_graph_entities s ON s.database_id = r.database_id AND s.entity_key = r.source_key
       JOIN rm_graph_entities t ON t.database_id = r.database_id AND t.entity_key = r.target_key
       WHERE r.database_id = $1 AND r.collection = $2 AND (r.source_key = $3 OR r.target_key = $3)
       ORDER BY r.item_key, r.chunk_index, r.source_key, r.target_key, r.predicate LIMIT 2000`,
      [db.id, collection, key],
    );
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
  private async items(databaseId: string, collection: string, id: string, caller: string[] | null, store?: string): Promise<ItemRef[]> {
    const rows: ItemRef[] = await this.infra.ds.query(
      `SELECT item_key, acl, source_type FROM rm_items i WHERE database_id = $1 AND collection = $2 AND item_id = $3 AND ${SERVED} ${store ? 'AND store = $4' : ''}`,
      store ? [databaseId, collection, id, store] : [databaseId, collection, id],
    );
    return rows.filter((i) => isVisible(i.acl, caller));
  }

  private async scope(req: FastifyRequest, query: Record<string, unknown>) {
    for (const k of Object.keys(query)) if (!PARAMS.has(k)) throw invalid(`${k} is not a parameter of this endpoint`);
    const ctx = contextOf(req);
    const scope = readScope(ctx, query, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    const db = await this.infra.directory.resolve(authOf(req), scope.database!);
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
