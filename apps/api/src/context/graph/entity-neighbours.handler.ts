import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { callerPrincipals, isVisible } from '@crs/domain/acl';
import { invalid } from '@crs/domain/errors';
import { entityKey } from '@crs/ingestion/graph/extract-graph';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { relationsOfEntity } from '@crs/projections/graph/graph.queries';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../../databases/database-directory';
import { graphEntity, type GraphEntityView, type GraphScope } from './graph-reads';

export interface NeighbourRelation {
  predicate: string;
  direction: 'out' | 'in';
  context: string | null;
  item_id: string;
  chunk_id: string;
}

export interface EntityNeighboursView {
  entity: string;
  neighbours: { entity: GraphEntityView; relations: NeighbourRelation[] }[];
  count: number;
}

/** The entities related to an entity (by name, as sent; required), with the relation evidence. */
export class GetEntityNeighbours extends Query<EntityNeighboursView> {
  constructor(readonly caller: Caller, readonly scope: GraphScope, readonly entity: unknown) {
    super();
  }
}

/** From the graph read model; the neighbours with the most relations first. */
@QueryHandler(GetEntityNeighbours)
export class GetEntityNeighboursHandler implements IQueryHandler<GetEntityNeighbours> {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource, private readonly directory: DatabaseDirectory) {}

  async execute({ caller, scope, entity }: GetEntityNeighbours): Promise<EntityNeighboursView> {
    const db = await this.directory.resolve(caller.key, scope.database);
    const principals = callerPrincipals(scope.acl);
    if (typeof entity !== 'string' || !entity) throw invalid('entity is required');
    const key = entityKey(entity);
    const rows = await relationsOfEntity(this.ds, db.id, scope.collection, key);
    const byNeighbour = new Map<string, { entity: GraphEntityView; relations: NeighbourRelation[] }>();
    for (const r of rows.filter((x) => isVisible(x.acl, principals))) {
      const [nk, nn, nt] = r.source_key === key ? [r.target_key, r.tn, r.tt] : [r.source_key, r.sn, r.st];
      const entry = byNeighbour.get(nk) ?? { entity: graphEntity(db.id, nk, nn, nt), relations: [] };
      entry.relations.push({ predicate: r.predicate, direction: r.source_key === key ? 'out' : 'in', context: r.context, item_id: r.item_id, chunk_id: `${r.item_key}:${r.chunk_index}` });
      byNeighbour.set(nk, entry);
    }
    const neighbours = [...byNeighbour.values()].sort((a, b) => b.relations.length - a.relations.length);
    return { entity: key, neighbours, count: neighbours.length };
  }
}
