import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** POST /webhooks/indexing. */
export class RegisterWebhookResponse {
  @ApiProperty({ type: Boolean, enum: [true] }) registered!: true;
  @ApiProperty() url!: string;
  @ApiProperty({ type: [String] }) event_types!: string[];
  @ApiProperty() signing_secret_configured!: boolean;
  @ApiProperty() message!: string;
  @ApiPropertyOptional({ description: 'Only when generated: shown in this answer and never again' }) signing_secret?: string;
}
