import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory, type DatabaseRecord } from '../database-directory';

/** The live databases of the caller's organization that its key reaches. */
export class ListDatabases extends Query<DatabaseRecord[]> {
  constructor(readonly caller: Caller) {
    super();
  }
}

@QueryHandler(ListDatabases)
export class ListDatabasesHandler implements IQueryHandler<ListDatabases> {
  constructor(private readonly directory: DatabaseDirectory) {}

  execute({ caller }: ListDatabases): Promise<DatabaseRecord[]> {
    return this.directory.list(caller.key);
  }
}
