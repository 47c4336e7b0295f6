import { ApiProperty } from '@nestjs/swagger';

/** GET /webhooks/indexing: the registration, never its signing secret. */
export class WebhookRegistrationResponse {
  @ApiProperty() registered!: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'null when none is registered; only the origin for a key limited to listed databases' }) url!: string | null;
  @ApiProperty({ type: [String] }) event_types!: string[];
  @ApiProperty() signing_secret_configured!: boolean;
}
