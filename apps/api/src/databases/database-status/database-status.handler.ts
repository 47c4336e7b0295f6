import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory, type DatabaseRecord } from '../database-directory';

/** One live database the caller's key reaches, with its provisioning flags (404 DATABASE_NOT_FOUND otherwise). */
export class GetDatabaseStatus extends Query<DatabaseRecord> {
  constructor(readonly caller: Caller, readonly database: string) {
    super();
  }
}

@QueryHandler(GetDatabaseStatus)
export class GetDatabaseStatusHandler implements IQueryHandler<GetDatabaseStatus> {
  constructor(private readonly directory: DatabaseDirectory) {}

  execute({ caller, database }: GetDatabaseStatus): Promise<DatabaseRecord> {
    return this.directory.resolve(caller.key, database);
  }
}
