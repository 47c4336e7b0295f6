import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../database-directory';

export interface CollectionsView {
  database: string;
  collections: { name: string; createdAt: string }[];
}

/** The active collections of one database the caller's key reaches. */
export class ListCollections extends Query<CollectionsView> {
  constructor(readonly caller: Caller, readonly database: string) {
    super();
  }
}

@QueryHandler(ListCollections)
export class ListCollectionsHandler implements IQueryHandler<ListCollections> {
  constructor(private readonly directory: DatabaseDirectory) {}

  async execute({ caller, database }: ListCollections): Promise<CollectionsView> {
    const db = await this.directory.resolve(caller.key, database);
    return { database: db.name, collections: await this.directory.collections(db.id) };
  }
}
