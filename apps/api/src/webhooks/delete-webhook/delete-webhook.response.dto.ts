import { ApiProperty } from '@nestjs/swagger';

/** DELETE /webhooks/indexing. */
export class DeleteWebhookResponse {
  @ApiProperty({ description: 'false when no webhook was registered' }) deleted!: boolean;
  @ApiProperty() message!: string;
}
