import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../database-directory';
import { DatabaseStreams } from '../database-streams';

/** Permanently remove one collection of a database and everything in it. */
export class DeleteCollection extends Command<{ database: string }> {
  constructor(readonly caller: Caller, readonly database: string, readonly collection: string) {
    super();
  }
}

/** Appends CollectionDeletionRequested on the database's stream; the worker removes the collection's items. */
@CommandHandler(DeleteCollection)
export class DeleteCollectionHandler implements ICommandHandler<DeleteCollection> {
  constructor(private readonly directory: DatabaseDirectory, private readonly streams: DatabaseStreams) {}

  async execute({ caller, database, collection }: DeleteCollection): Promise<{ database: string }> {
    const db = await this.directory.resolve(caller.key, database);
    await this.streams.onDatabase(caller.ctx, db.id, { type: 'RequestCollectionDeletion', databaseId: db.id, collection });
    return { database: db.name };
  }
}
