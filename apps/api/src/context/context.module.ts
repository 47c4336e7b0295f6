import { Module } from '@nestjs/common';
import { DatabasesModule } from '../databases/databases.module';
import { IngestContextController } from './ingest-context/ingest-context.http.controller';
import { AddMemoryController } from './ingest-context/add-memory.http.controller';
import { IngestContextHandler } from './ingest-context/ingest-context.handler';
import { ContextStatusController } from './context-status/context-status.http.controller';
import { GetContextStatusHandler } from './context-status/context-status.handler';
import { UpdateMetadataController } from './update-metadata/update-metadata.http.controller';
import { UpdateItemMetadataHandler } from './update-metadata/update-metadata.handler';
import { ListContextController } from './list-context/list-context.http.controller';
import { ListContextHandler } from './list-context/list-context.handler';
import { DeleteContextController } from './delete-context/delete-context.http.controller';
import { DeleteContextHandler } from './delete-context/delete-context.handler';
import { GraphController } from './graph/graph.http.controller';
import { GetRelationsHandler } from './graph/relations.handler';
import { GetItemEntitiesHandler } from './graph/item-entities.handler';
import { GetEntityNeighboursHandler } from './graph/entity-neighbours.handler';
import { InspectContextController } from './inspect-context/inspect-context.http.controller';
import { InspectContextHandler } from './inspect-context/inspect-context.handler';
import { PresignedContentController } from './presigned-content/presigned-content.http.controller';
import { GetPresignedContentHandler } from './presigned-content/presigned-content.handler';
import { PresignedUrls } from './presigned-urls';

/** Items of a database: ingest, list, status, inspect, edit, delete, the graph, presigned content. */
@Module({
  imports: [DatabasesModule],
  controllers: [
    IngestContextController,
    AddMemoryController,
    ContextStatusController,
    UpdateMetadataController,
    ListContextController,
    DeleteContextController,
    GraphController,
    InspectContextController,
    PresignedContentController,
  ],
  providers: [
    PresignedUrls,
    IngestContextHandler,
    DeleteContextHandler,
    UpdateItemMetadataHandler,
    GetContextStatusHandler,
    ListContextHandler,
    GetRelationsHandler,
    GetItemEntitiesHandler,
    GetEntityNeighboursHandler,
    InspectContextHandler,
    GetPresignedContentHandler,
  ],
})
export class ContextModule {}
