import { ApiProperty } from '@nestjs/swagger';

/** DELETE /webhooks/indexing/signing-secret. */
export class DeleteSigningSecretResponse {
  @ApiProperty({ description: 'false when no secret was set' }) deleted!: boolean;
  @ApiProperty({ type: Boolean, enum: [false] }) signing_secret_configured!: false;
  @ApiProperty() message!: string;
}
