import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { HealthController } from './health/health.http.controller';
import { IngestContextController } from './context/ingest-context/ingest-context.http.controller';
import { ContextStatusController } from './context/context-status/context-status.http.controller';
import { IngestionService } from './context/ingestion.service';
import { QueryController } from './query/query.http.controller';
import { UpdateMetadataController } from './context/update-metadata/update-metadata.http.controller';
import { ListContextController } from './context/list-context/list-context.http.controller';
import { DeleteContextController } from './context/delete-context/delete-context.http.controller';
import { AddMemoryController } from './context/ingest-context/add-memory.http.controller';
import { GraphController } from './context/graph/graph.http.controller';
import { InspectContextController } from './context/inspect-context/inspect-context.http.controller';
import { PresignedContentController } from './context/presigned-content/presigned-content.http.controller';
import { PresignedUrls } from './context/presigned-urls';
import { QueryService } from './query/query.service';
import { RetrievalService } from './query/retrieval.service';
import { ThinkingService } from './query/thinking.service';
import { GraphContextService } from './query/graph-context.service';
import { Metrics } from './health/metrics';
import { EnvelopeExceptionFilter } from './http/exception.filter';
import { EnvelopeInterceptor } from './http/envelope.interceptor';
import { createValidationPipe } from './http/validation';
import { type Platform, PlatformModule } from '@crs/platform';
import { DatabasesModule } from './databases/databases.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { FeedbackModule } from './feedback/feedback.module';

@Module({})
export class AppModule {
  static forPlatform(platform: Platform, metrics: Metrics): DynamicModule {
    return {
      module: AppModule,
      imports: [CqrsModule.forRoot(), PlatformModule.forPlatform(platform), DatabasesModule, WebhooksModule, FeedbackModule],
      controllers: [
        HealthController,
        IngestContextController,
        ContextStatusController,
        QueryController,
        UpdateMetadataController,
        ListContextController,
        DeleteContextController,
        AddMemoryController,
        GraphController,
        InspectContextController,
        PresignedContentController,
      ],
      providers: [
        { provide: Metrics, useValue: metrics },
        { provide: APP_FILTER, useClass: EnvelopeExceptionFilter },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        IngestionService,
        RetrievalService,
        ThinkingService,
        GraphContextService,
        QueryService,
        PresignedUrls,
      ],
    };
  }
}
