import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../database-directory';
import { DatabaseStreams } from '../database-streams';

/** Permanently remove the database `name`; answers the name as stored. */
export class DeleteDatabase extends Command<{ name: string }> {
  constructor(readonly caller: Caller, readonly database: string) {
    super();
  }
}

/**
 * Appends DatabaseDeletionRequested on the registry (again while it is under way: nothing). From that append on the
 * database serves nothing; the worker deletes its items, indices and blobs and then appends DatabaseDeleted.
 */
@CommandHandler(DeleteDatabase)
export class DeleteDatabaseHandler implements ICommandHandler<DeleteDatabase> {
  constructor(private readonly directory: DatabaseDirectory, private readonly streams: DatabaseStreams) {}

  async execute({ caller, database }: DeleteDatabase): Promise<{ name: string }> {
    const db = await this.directory.resolve(caller.key, database);
    await this.streams.onRegistry({ ...caller.ctx, databaseId: db.id }, { type: 'RequestDatabaseDeletion', name: db.name });
    return { name: db.name };
  }
}
