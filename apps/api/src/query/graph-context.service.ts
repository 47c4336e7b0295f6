import { Inject, Injectable } from '@nestjs/common';
import { entityKey } from '@crs/ingestion/graph/extract-graph';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '@crs/platform/tokens';
import type { RankedChunk } from './retrieval.service';
import { chunksMentioningEntities, entitiesOfChunks, entityChunkCounts, knownEntities, relatedEntities, relationsOfChunks } from '@crs/projections/graph/graph.queries';

export interface EntityRef {
  name: string;
  type: string;
  namespace: string;
  entity_id: string;
  identifier: string;
}

/** The graph types of the original SDK (Entity, RelationEvidence, ScoredPath). */
export interface ScoredPath {
  triplets: { source: EntityRef; relation: Record<string, unknown>; target: EntityRef }[];
  relevancy_score: number;
  combined_context: string;
  group_id: string;
  source_chunk_ids: string[];
}

const chunkIndexOf = (chunkId: string) => Number(chunkId.slice(chunkId.lastIndexOf(':') + 1));

/**
 * Reads the context graph (built by the graph projection). Only items whose indexing is `completed` count,
 * and callers pass only chunks they may see, so nothing derived from a hidden document leaks.
 */
@Injectable()
export class GraphContextService {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** Entities named in a query: every 1-3 word n-gram of the normalized query that is a known entity. */
  async queryEntities(databaseId: string, query: string): Promise<string[]> {
    const words = entityKey(query).split(' ').filter(Boolean);
    const grams = new Set<string>();
    for (let n = 1; n <= 3; n++) for (let i = 0; i + n <= words.length; i++) grams.add(words.slice(i, i + n).join(' '));
    if (!grams.size) return [];
    const rows = await knownEntities(this.ds, databaseId, [...grams]);
    return rows.map((r) => r.entity_key);
  }

  /** Entities mentioned by the given chunks (of completed items). */
  async chunkEntities(databaseId: string, chunks: { itemKey: string; chunkIndex: number }[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (!chunks.length) return out;
    const rows = await entitiesOfChunks(this.ds, databaseId, chunks.map((c) => c.itemKey), chunks.map((c) => c.chunkIndex));
    for (const r of rows) out.set(`${r.item_key}:${r.chunk_index}`, [...(out.get(`${r.item_key}:${r.chunk_index}`) ?? []), r.entity_key]);
    return out;
  }

  /** Entities one relation away from the given ones. */
  async neighbours(databaseId: string, keys: string[], limit = 20): Promise<string[]> {
    if (!keys.length) return [];
    const rows = await relatedEntities(this.ds, databaseId, keys, limit);
    return rows.map((r) => r.k);
  }

  /**
   * Chunks mentioning weighted entities, scored by the sum of weight / log2(1 + document frequency): an entity
   * mentioned everywhere (a conversation's speaker) says little about any one chunk. An entity mentioned by more than
   * `maxEntityChunks` chunks (0: no bound) is left out, as a stop word is from a keyword query: its mentions tie, so
   * the chunks it alone would bring are cut by key order, and scoring them read every mention (at 100k chunks an entity
   * in a fifth of them took ~70 ms of Postgres per entity). Its count stops at the bound, so that costs a bounded read.
   */
  async chunksMentioning(
    databaseId: string,
    weights: Map<string, number>,
    scope: { collections?: string[]; stores: string[] },
    limit: number,
    maxEntityChunks: number,
  ): Promise<{ itemKey: string; chunkIndex: number; score: number }[]> {
    if (!weights.size || limit <= 0) return [];
    const counts = await entityChunkCounts(this.ds, databaseId, [...weights.keys()], maxEntityChunks > 0 ? maxEntityChunks : undefined);
    const kept = counts.filter((c) => c.df > 0 && (maxEntityChunks <= 0 || c.df <= maxEntityChunks));
    if (!kept.length) return [];
    const entities = { keys: kept.map((c) => c.entity_key), weights: kept.map((c) => weights.get(c.entity_key)!), dfs: kept.map((c) => Number(c.df)) };
    // Scored and cut in Postgres: an entity every chunk mentions (a conversation's speaker) has tens of thousands
    // of mentions at 100k chunks, which took ~0.7 s to ship here. The best `pool` chunks by score are checked
    // against the items (completed, in the stores asked); when fewer than `limit` pass, a deeper cut is taken. The
    // order is total (score, then item key and chunk in byte order), so the survivors of a cut are exactly the
    // best `limit` of the whole ranking.
    for (let pool = limit * 4; ; pool *= 4) {
      const rows = await chunksMentioningEntities(this.ds, databaseId, entities, scope, pool);
      const passed = rows.filter((r) => r.ok);
      if (passed.length >= limit || rows.length < pool) return passed.slice(0, limit).map((r) => ({ itemKey: r.item_key, chunkIndex: r.chunk_index, score: Number(r.score) }));
    }
  }

  /** graph_context for the returned chunks: relations extracted from them, grouped per chunk; paths touching query entities first. */
  async context(databaseId: string, results: RankedChunk[], queryKeys: string[]) {
    const empty = { query_paths: [] as ScoredPath[], chunk_relations: [] as ScoredPath[], chunk_id_to_group_ids: {} as Record<string, string[]>, synthesis_context: null as string | null };
    const completed = results.filter((r) => r.item.status === 'completed');
    if (!completed.length) return empty;
    const rows = await relationsOfChunks(this.ds, databaseId, completed.map((r) => r.item.item_key), completed.map((r) => chunkIndexOf(r.candidate.chunkId)));
    const entity = (key: string, name: string, type: string): EntityRef => ({ name, type, namespace: databaseId, entity_id: key, identifier: key });
    const byChunk = new Map<string, typeof rows>();
    for (const r of rows) byChunk.set(`${r.item_key}:${r.chunk_index}`, [...(byChunk.get(`${r.item_key}:${r.chunk_index}`) ?? []), r]);
    const q = new Set(queryKeys);
    const chunkRelations: ScoredPath[] = [];
    const queryPaths: ScoredPath[] = [];
    const groups: Record<string, string[]> = {};
    for (const r of completed) {
      const rels = byChunk.get(r.candidate.chunkId) ?? [];
      if (!rels.length) continue;
      const groupId = `g:${r.candidate.chunkId}`;
      groups[r.candidate.chunkId] = [groupId];
      const triplets = rels.slice(0, 20).map((x, i) => ({
        source: entity(x.source_key, x.sn, x.st),
        relation: { canonical_predicate: x.predicate, raw_predicate: x.predicate, context: x.context, confidence: null, temporal_details: null, timestamp: null, relationship_id: `${r.candidate.chunkId}#${i}`, chunk_id: r.candidate.chunkId, source_entity_id: x.source_key, target_entity_id: x.target_key },
        target: entity(x.target_key, x.tn, x.tt),
      }));
      const path: ScoredPath = { triplets, relevancy_score: Math.round(r.score * 1e6) / 1e6, combined_context: [...new Set(rels.map((x) => x.context))].slice(0, 3).join(' '), group_id: groupId, source_chunk_ids: [r.candidate.chunkId] };
      chunkRelations.push(path);
      const touching = triplets.filter((t) => q.has(t.source.entity_id) || q.has(t.target.entity_id));
      if (touching.length) queryPaths.push({ ...path, triplets: touching });
    }
    return { query_paths: queryPaths.slice(0, 10), chunk_relations: chunkRelations, chunk_id_to_group_ids: groups, synthesis_context: null };
  }
}
