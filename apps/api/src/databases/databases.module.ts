import { Module } from '@nestjs/common';
import { CreateDatabaseController } from './create-database/create-database.http.controller';
import { CreateDatabaseHandler } from './create-database/create-database.handler';
import { DeleteDatabaseController } from './delete-database/delete-database.http.controller';
import { DeleteDatabaseHandler } from './delete-database/delete-database.handler';
import { ListDatabasesController } from './list-databases/list-databases.http.controller';
import { ListDatabasesHandler } from './list-databases/list-databases.handler';
import { DatabaseStatusController } from './database-status/database-status.http.controller';
import { GetDatabaseStatusHandler } from './database-status/database-status.handler';
import { ListCollectionsController } from './list-collections/list-collections.http.controller';
import { ListCollectionsHandler } from './list-collections/list-collections.handler';
import { DeleteCollectionController } from './delete-collection/delete-collection.http.controller';
import { DeleteCollectionHandler } from './delete-collection/delete-collection.handler';
import { DatabaseStatsController } from './database-stats/database-stats.http.controller';
import { GetDatabaseStatsHandler } from './database-stats/database-stats.handler';
import { DatabaseDirectory } from './database-directory';
import { DatabaseStreams } from './database-streams';

/** Databases and collections: create, delete, list, status, stats. Exports the directory and the streams to the other areas. */
@Module({
  controllers: [
    CreateDatabaseController,
    DeleteDatabaseController,
    ListDatabasesController,
    DatabaseStatusController,
    ListCollectionsController,
    DeleteCollectionController,
    DatabaseStatsController,
  ],
  providers: [
    DatabaseDirectory,
    DatabaseStreams,
    CreateDatabaseHandler,
    DeleteDatabaseHandler,
    ListDatabasesHandler,
    GetDatabaseStatusHandler,
    ListCollectionsHandler,
    DeleteCollectionHandler,
    GetDatabaseStatsHandler,
  ],
  exports: [DatabaseDirectory, DatabaseStreams],
})
export class DatabasesModule {}
