import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { type Platform, PlatformModule } from '@crs/platform';
import { HealthController } from './health/health.http.controller';
import { Metrics } from './health/metrics';
import { EnvelopeExceptionFilter } from './http/exception.filter';
import { EnvelopeInterceptor } from './http/envelope.interceptor';
import { createValidationPipe } from './http/validation';
import { DatabasesModule } from './databases/databases.module';
import { ContextModule } from './context/context.module';
import { QueryModule } from './query/query.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { FeedbackModule } from './feedback/feedback.module';
import { ConnectorsModule } from './connectors/connectors.module';

/**
 * The API: the platform's components (PlatformModule, by token), the CQRS buses, one module per area (each lists its
 * controllers and the command and query handlers they dispatch to), and the HTTP conventions every route shares
 * (envelope, error filter, request validation).
 */
@Module({})
export class AppModule {
  static forPlatform(platform: Platform, metrics: Metrics): DynamicModule {
    return {
      module: AppModule,
      imports: [CqrsModule.forRoot(), PlatformModule.forPlatform(platform), DatabasesModule, ContextModule, QueryModule, WebhooksModule, FeedbackModule, ConnectorsModule],
      controllers: [HealthController],
      providers: [
        { provide: Metrics, useValue: metrics },
        { provide: APP_FILTER, useClass: EnvelopeExceptionFilter },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }
}
