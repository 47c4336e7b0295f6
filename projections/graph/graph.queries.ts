import type { Sql } from '@crs/persistence/data-source';
import { queryPrepared } from '@crs/persistence/prepared';
import { inActiveCollection } from '@crs/projections/databases/databases.queries';
import { itemAccess, servedItem } from '@crs/projections/items/items.queries';

/** A row of rm_graph_entities: one per normalized name in a database. */
export interface GraphEntityRow {
  database_id: string;
  entity_key: string;
  name: string;
  type: string;
}

/** A row of rm_graph_mentions: a chunk of an item mentions an entity. */
export interface GraphMentionRow {
  database_id: string;
  item_key: string;
  chunk_index: number;
  entity_key: string;
  collection: string;
  name: string;
  type: string;
}

/** A row of rm_graph_relations: a relation between two entities, with the sentence of the chunk it came from. */
export interface GraphRelationRow {
  database_id: string;
  item_key: string;
  chunk_index: number;
  source_key: string;
  target_key: string;
  predicate: string;
  context: string;
  collection: string;
}

/** A relation with the names and types of its two entities (`sn`/`st`: source, `tn`/`tt`: target). */
export type RelationWithEntitiesRow = Pick<GraphRelationRow, 'item_key' | 'chunk_index' | 'source_key' | 'target_key' | 'predicate' | 'context'> & { sn: string; st: string; tn: string; tt: string };

/** A relation with its entities, and the id of the item it came from and the ACL that decides who sees it (`itemAccess`). */
export type ItemRelationRow = RelationWithEntitiesRow & { item_id: string; acl: string[] | null };

// ---- the query path (graph context, thinking mode) ----

/** Which of these entity keys are known in a database. */
export function knownEntities(sql: Sql, databaseId: string, keys: string[]): Promise<Pick<GraphEntityRow, 'entity_key'>[]> {
  return queryPrepared<Pick<GraphEntityRow, 'entity_key'>>(sql, 'crs_query_entities', 'SELECT entity_key FROM rm_graph_entities WHERE database_id = $1 AND entity_key = ANY($2)', [databaseId, keys]);
}

/** The entities the given chunks (`itemKeys[i]`, `chunkIndexes[i]`) of completed items mention. */
export function entitiesOfChunks(sql: Sql, databaseId: string, itemKeys: string[], chunkIndexes: number[]): Promise<Pick<GraphMentionRow, 'item_key' | 'chunk_index' | 'entity_key'>[]> {
  return sql.query(
    `SELECT m.item_key, m.chunk_index, m.entity_key FROM rm_graph_mentions m
       JOIN rm_items i ON i.database_id = m.database_id AND i.item_key = m.item_key AND i.status = 'completed'
       WHERE m.database_id = $1 AND (m.item_key, m.chunk_index) IN (SELECT * FROM unnest($2::text[], $3::int[]))`,
    [databaseId, itemKeys, chunkIndexes],
  );
}

/** Up to `limit` entities one relation away from the given ones, most related first. */
export function relatedEntities(sql: Sql, databaseId: string, keys: string[], limit: number): Promise<{ k: string }[]> {
  return sql.query(
    `SELECT k FROM (
         SELECT target_key AS k, count(*) AS n FROM rm_graph_relations WHERE database_id = $1 AND source_key = ANY($2) GROUP BY 1
         UNION ALL
         SELECT source_key AS k, count(*) AS n FROM rm_graph_relations WHERE database_id = $1 AND target_key = ANY($2) GROUP BY 1
       ) x WHERE NOT (k = ANY($2)) GROUP BY k ORDER BY sum(n) DESC, k LIMIT $3`,
    [databaseId, keys, limit],
  );
}

/** A chunk scored by the entities it mentions; `ok`: its item is completed, in the stores asked and served. */
export interface ScoredChunkRow {
  item_key: string;
  chunk_index: number;
  score: number;
  ok: boolean;
}

/**
 * How many chunks of a database mention each entity (its document frequency), counted up to `atMost + 1` when `atMost`
 * is given: an entity past the bound reads only that many index entries, whatever its real count.
 */
export function entityChunkCounts(sql: Sql, databaseId: string, keys: string[], atMost?: number): Promise<{ entity_key: string; df: number }[]> {
  const bound = atMost === undefined ? '' : `LIMIT ${Math.floor(atMost) + 1}`;
  return sql.query(
    `SELECT k.entity_key, d.df FROM unnest($2::text[]) AS k(entity_key)
       CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM (
         SELECT 1 FROM rm_graph_mentions m WHERE m.database_id = $1 AND m.entity_key = k.entity_key ${bound}) x) d`,
    [databaseId, keys],
  );
}

/**
 * The best `pool` chunks mentioning weighted entities (`keys[i]` weighs `weights[i]` and is mentioned by `dfs[i]` chunks,
 * from entityChunkCounts), scored by the sum of weight / log2(1 + document frequency), in a total order (score, then
 * item key and chunk in byte order), each saying whether its item passes (completed, in `stores`, of an active
 * collection). Scored and cut in Postgres: an entity every chunk mentions has tens of thousands of mentions at 100k
 * chunks.
 */
export function chunksMentioningEntities(
  sql: Sql,
  databaseId: string,
  entities: { keys: string[]; weights: number[]; dfs: number[] },
  scope: { collections?: string[]; stores: string[] },
  pool: number,
): Promise<ScoredChunkRow[]> {
  const params: unknown[] = [databaseId, entities.keys, entities.weights, entities.dfs, scope.stores];
  if (scope.collections) params.push(scope.collections);
  return sql.query(
    `WITH w AS (SELECT * FROM unnest($2::text[], $3::float8[], $4::float8[]) AS w(entity_key, weight, df)),
         scored AS (
           SELECT m.item_key, m.chunk_index, sum(w.weight / (ln(1 + w.df) / ln(2))) AS score
           FROM rm_graph_mentions m JOIN w ON w.entity_key = m.entity_key
           WHERE m.database_id = $1 AND m.entity_key = ANY($2) ${scope.collections ? 'AND m.collection = ANY($6)' : ''}
           GROUP BY m.item_key, m.chunk_index
           ORDER BY score DESC, m.item_key COLLATE "C", m.chunk_index
           LIMIT ${Math.floor(pool)})
         SELECT s.item_key, s.chunk_index, s.score, (i.item_key IS NOT NULL) AS ok
         FROM scored s
         LEFT JOIN rm_items i ON i.database_id = $1 AND i.item_key = s.item_key AND i.status = 'completed' AND i.store = ANY($5) AND ${inActiveCollection('i')}
         ORDER BY s.score DESC, s.item_key COLLATE "C", s.chunk_index`,
    params,
  );
}

/** Up to 500 relations extracted from the given chunks (`itemKeys[i]`, `chunkIndexes[i]`), with their entities. */
export function relationsOfChunks(sql: Sql, databaseId: string, itemKeys: string[], chunkIndexes: number[]): Promise<RelationWithEntitiesRow[]> {
  return queryPrepared<RelationWithEntitiesRow>(
    sql,
    'crs_query_graph_context',
    `SELECT r.item_key, r.chunk_index, r.source_key, r.target_key, r.predicate, r.context, s.name AS sn, s.type AS st, t.name AS tn, t.type AS tt
       FROM rm_graph_relations r
       JOIN rm_graph_entities s ON s.database_id = r.database_id AND s.entity_key = r.source_key
       JOIN rm_graph_entities t ON t.database_id = r.database_id AND t.entity_key = r.target_key
       WHERE r.database_id = $1 AND (r.item_key, r.chunk_index) IN (SELECT * FROM unnest($2::text[], $3::int[]))
       ORDER BY r.item_key, r.chunk_index, r.source_key, r.target_key, r.predicate LIMIT 500`,
    [databaseId, itemKeys, chunkIndexes],
  );
}

// ---- graph inspection (/context/relations, /context/graph/*): completed items that are served ----

/** The relations of a collection's completed, served items (or of the items with one id, in one store when given). */
export function relationsInCollection(sql: Sql, databaseId: string, collection: string, item?: { id: string; store?: string }): Promise<ItemRelationRow[]> {
  const params: unknown[] = [databaseId, collection];
  const access = itemAccess('i', { inferred: true });
  let where = `r.database_id = $1 AND r.collection = $2 AND i.status = 'completed' AND ${servedItem('i')} AND ${access.served}`;
  if (item) {
    params.push(item.id);
    where += ` AND i.item_id = $${params.length}`;
    if (item.store) {
      params.push(item.store);
      where += ` AND i.store = $${params.length}`;
    }
  }
  return sql.query(
    `SELECT r.item_key, i.item_id, r.chunk_index, r.source_key, r.target_key, r.predicate, r.context, s.name AS sn, s.type AS st, t.name AS tn, t.type AS tt, ${access.acl} AS acl
       FROM rm_graph_relations r
       JOIN rm_items i ON i.database_id = r.database_id AND i.item_key = r.item_key
       ${access.joins}
       JOIN rm_graph_entities s ON s.database_id = r.database_id AND s.entity_key = r.source_key
       JOIN rm_graph_entities t ON t.database_id = r.database_id AND t.entity_key = r.target_key
       WHERE ${where}
       ORDER BY r.item_key, r.chunk_index, r.source_key, r.target_key, r.predicate`,
    params,
  );
}

/** The entities the given (completed) items mention, with how often, most mentioned first. */
export function entitiesOfItems(sql: Sql, databaseId: string, itemKeys: string[]): Promise<(GraphEntityRow & { mentions: number })[]> {
  return sql.query(
    `SELECT e.entity_key, e.name, e.type, count(*)::int AS mentions FROM rm_graph_mentions m
       JOIN rm_graph_entities e ON e.database_id = m.database_id AND e.entity_key = m.entity_key
       JOIN rm_items i ON i.database_id = m.database_id AND i.item_key = m.item_key AND i.status = 'completed'
       WHERE m.database_id = $1 AND m.item_key = ANY($2) GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1`,
    [databaseId, itemKeys],
  );
}

/** Up to 2000 relations of a collection's completed, served items that have this entity at either end. */
export function relationsOfEntity(sql: Sql, databaseId: string, collection: string, entityKey: string): Promise<ItemRelationRow[]> {
  const access = itemAccess('i', { inferred: true });
  return sql.query(
    `SELECT r.item_key, i.item_id, r.chunk_index, r.source_key, r.target_key, r.predicate, r.context, s.name AS sn, s.type AS st, t.name AS tn, t.type AS tt, ${access.acl} AS acl
       FROM rm_graph_relations r
       JOIN rm_items i ON i.database_id = r.database_id AND i.item_key = r.item_key AND i.status = 'completed' AND ${servedItem('i')}
       ${access.joins}
       JOIN rm_graph_entities s ON s.database_id = r.database_id AND s.entity_key = r.source_key
       JOIN rm_graph_entities t ON t.database_id = r.database_id AND t.entity_key = r.target_key
       WHERE r.database_id = $1 AND r.collection = $2 AND (r.source_key = $3 OR r.target_key = $3) AND ${access.served}
       ORDER BY r.item_key, r.chunk_index, r.source_key, r.target_key, r.predicate LIMIT 2000`,
    [databaseId, collection, entityKey],
  );
}
