import { Module } from '@nestjs/common';
import { RegisterWebhookController } from './register-webhook/register-webhook.http.controller';
import { RegisterWebhookHandler } from './register-webhook/register-webhook.handler';
import { GetWebhookController } from './get-webhook/get-webhook.http.controller';
import { GetWebhookHandler } from './get-webhook/get-webhook.handler';
import { DeleteWebhookController } from './delete-webhook/delete-webhook.http.controller';
import { DeleteWebhookHandler } from './delete-webhook/delete-webhook.handler';
import { SetSigningSecretController } from './set-signing-secret/set-signing-secret.http.controller';
import { SetSigningSecretHandler } from './set-signing-secret/set-signing-secret.handler';
import { DeleteSigningSecretController } from './delete-signing-secret/delete-signing-secret.http.controller';
import { DeleteSigningSecretHandler } from './delete-signing-secret/delete-signing-secret.handler';
import { TestWebhookController } from './test-webhook/test-webhook.http.controller';
import { TestWebhookHandler } from './test-webhook/test-webhook.handler';
import { ListDeliveriesController } from './list-deliveries/list-deliveries.http.controller';
import { ListDeliveriesHandler } from './list-deliveries/list-deliveries.handler';
import { GetDeliveryController } from './get-delivery/get-delivery.http.controller';
import { GetDeliveryHandler } from './get-delivery/get-delivery.handler';
import { RetryDeliveryController } from './retry-delivery/retry-delivery.http.controller';
import { RetryDeliveryHandler } from './retry-delivery/retry-delivery.handler';
import { WebhookStream } from './webhook-stream';

/** The organization's indexing webhook: registration, signing secret, test event, delivery records and retries. */
@Module({
  controllers: [
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
    WebhookStream,
    RegisterWebhookHandler,
    GetWebhookHandler,
    DeleteWebhookHandler,
    SetSigningSecretHandler,
    DeleteSigningSecretHandler,
    TestWebhookHandler,
    ListDeliveriesHandler,
    GetDeliveryHandler,
    RetryDeliveryHandler,
  ],
})
export class WebhooksModule {}
