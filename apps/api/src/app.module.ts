import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { HealthController } from './health/health.http.controller';
import { SubmitFeedbackController } from './feedback/submit-feedback/submit-feedback.http.controller';
import { SubmitFeedbackHandler } from './feedback/submit-feedback/submit-feedback.handler';
import { RegisterWebhookController } from './webhooks/register-webhook/register-webhook.http.controller';
import { GetWebhookController } from './webhooks/get-webhook/get-webhook.http.controller';
import { DeleteWebhookController } from './webhooks/delete-webhook/delete-webhook.http.controller';
import { SetSigningSecretController } from './webhooks/set-signing-secret/set-signing-secret.http.controller';
import { DeleteSigningSecretController } from './webhooks/delete-signing-secret/delete-signing-secret.http.controller';
import { TestWebhookController } from './webhooks/test-webhook/test-webhook.http.controller';
import { ListDeliveriesController } from './webhooks/list-deliveries/list-deliveries.http.controller';
import { GetDeliveryController } from './webhooks/get-delivery/get-delivery.http.controller';
import { RetryDeliveryController } from './webhooks/retry-delivery/retry-delivery.http.controller';
import { WebhookCommands } from './webhooks/webhook-commands';
import { WebhookReads } from './webhooks/webhook-reads';
import { Metrics } from './health/metrics';
import { EnvelopeExceptionFilter } from './http/exception.filter';
import { EnvelopeInterceptor } from './http/envelope.interceptor';
import { createValidationPipe } from './http/validation';
import { type Platform, PlatformModule } from '@crs/platform';
import { DatabasesModule } from './databases/databases.module';
import { ContextModule } from './context/context.module';
import { QueryModule } from './query/query.module';

@Module({})
export class AppModule {
  static forPlatform(platform: Platform, metrics: Metrics): DynamicModule {
    return {
      module: AppModule,
      imports: [CqrsModule.forRoot(), PlatformModule.forPlatform(platform), DatabasesModule, ContextModule, QueryModule],
      controllers: [
        HealthController,
        SubmitFeedbackController,
        RegisterWebhookController,
        GetWebhookController,
        DeleteWebhookController,
        SetSigningSecretController,
        DeleteSigningSecretController,
        TestWebhookController,
        ListDeliveriesController,
        GetDeliveryController,
        RetryDeliveryController,
      ],
      providers: [
        { provide: Metrics, useValue: metrics },
        { provide: APP_FILTER, useClass: EnvelopeExceptionFilter },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        SubmitFeedbackHandler,
        WebhookCommands,
        WebhookReads,
      ],
    };
  }
}
