import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** POST /webhooks/indexing/signing-secret. */
export class SetSigningSecretResponse {
  @ApiPropertyOptional({ description: 'Only when generated: shown in this answer and never again' }) signing_secret?: string;
  @ApiProperty() generated!: boolean;
  @ApiProperty({ type: Boolean, enum: [true] }) signing_secret_configured!: true;
  @ApiProperty() message!: string;
}
