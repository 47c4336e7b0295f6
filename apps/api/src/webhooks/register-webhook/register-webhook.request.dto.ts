import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/**
 * POST /webhooks/indexing. The fields are only whitelisted here: RegisterWebhookHandler checks them (URL guard, secret
 * length, 422 on both secret options) so each failure keeps its own message and code.
 */
export class RegisterWebhookRequest {
  @ApiProperty({ type: String, description: 'Public HTTPS URL (private, loopback, link-local and reserved addresses are refused)', example: 'https://example.com/hooks/indexing' })
  @Allow() url?: unknown;

  @ApiPropertyOptional({ type: [String], description: 'Default: every event type (indexing.status_changed)', example: ['indexing.status_changed'] })
  @Allow() event_types?: unknown;

  @ApiPropertyOptional({ type: String, minLength: 16, description: 'HMAC signing secret (at least 16 characters). Omitted on edit: the existing secret is kept.' })
  @Allow() signing_secret?: unknown;

  @ApiPropertyOptional({ type: Boolean, description: 'Generate a secret, returned once in this response (422 together with signing_secret)' })
  @Allow() generate_signing_secret?: unknown;
}
