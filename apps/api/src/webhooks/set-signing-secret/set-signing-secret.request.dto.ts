import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/**
 * POST /webhooks/indexing/signing-secret (the body is optional). The fields are only whitelisted here:
 * SetSigningSecretHandler checks them so each failure keeps its own message and code.
 */
export class SetSigningSecretRequest {
  @ApiPropertyOptional({ type: String, minLength: 16, description: 'Supply a secret; omit the body to generate one (returned once)' })
  @Allow() signing_secret?: unknown;

  @ApiPropertyOptional({ type: Boolean, description: 'Generate a secret (the default without a body)' })
  @Allow() generate_signing_secret?: unknown;
}
