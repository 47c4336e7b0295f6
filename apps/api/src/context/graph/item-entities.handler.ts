import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { callerPrincipals } from '@crs/domain/acl';
import { invalid, notFound } from '@crs/domain/errors';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { entitiesOfItems } from '@crs/projections/graph/graph.queries';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../../databases/database-directory';
import { graphEntity, visibleItemsWithId, type GraphEntityView, type GraphScope } from './graph-reads';

export interface ItemEntitiesView {
  id: string;
  entities: (GraphEntityView & { mentions: number })[];
}

/** The entities an item mentions; `id` as sent (required). */
export class GetItemEntities extends Query<{ view: ItemEntitiesView; items: { source_type: string }[] }> {
  constructor(readonly caller: Caller, readonly scope: GraphScope, readonly id: unknown) {
    super();
  }
}

/** From the graph read model; an item the caller may not see is not found. `items`: the items of that id it may see. */
@QueryHandler(GetItemEntities)
export class GetItemEntitiesHandler implements IQueryHandler<GetItemEntities> {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource, private readonly directory: DatabaseDirectory) {}

  async execute({ caller, scope, id }: GetItemEntities): Promise<{ view: ItemEntitiesView; items: { source_type: string }[] }> {
    const db = await this.directory.resolve(caller.key, scope.database);
    const principals = callerPrincipals(scope.acl);
    if (typeof id !== 'string' || !id) throw invalid('id is required');
    const seen = await visibleItemsWithId(this.ds, db.id, scope.collection, id, principals);
    if (!seen.length) throw notFound('ITEM_NOT_FOUND', `no item with id '${id}'`);
    const rows = await entitiesOfItems(this.ds, db.id, seen.map((i) => i.item_key));
    return { view: { id, entities: rows.map((r) => ({ ...graphEntity(db.id, r.entity_key, r.name, r.type), mentions: r.mentions })) }, items: seen };
  }
}
