import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/*
 * The shapes every response shares (docs/api-conventions.md, "Envelope and request ids"), for the OpenAPI document:
 * `meta`, its deprecation notices and the error envelope. envelope.ts builds them; these classes only describe them.
 */

/** One entry of `meta.deprecation`: a deprecated name or path the request used, and its replacement. */
export class DeprecationNoticeDto {
  @ApiProperty({ type: Boolean, enum: [true] }) deprecated!: true;
  @ApiProperty({ description: 'The deprecated field or path the request used', example: 'tenant_id' }) deprecated_field!: string;
  @ApiProperty({ example: '2.0.1' }) deprecated_since!: string;
  @ApiProperty() message!: string;
  @ApiProperty({ example: 'database' }) preferred_field!: string;
}

/** `meta`: on every enveloped answer, every legacy answer and every error. */
export class ResponseMetaDto {
  @ApiProperty({ format: 'uuid', description: 'A fresh id per request, also in the X-Request-ID header (feedback links to a query by it)' })
  request_id!: string;

  @ApiProperty({ example: '2.0.1' }) api_version!: string;

  @ApiPropertyOptional({ description: 'Server-side time in milliseconds' }) latency_ms?: number;

  @ApiPropertyOptional({ description: 'The database the request was scoped to, as sent' }) database?: string;
  @ApiPropertyOptional({ description: 'The collection the request was scoped to' }) collection?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Echoes a deprecated tenant_id the request used' }) tenant_id?: string;
  @ApiPropertyOptional({ deprecated: true, description: 'Echoes a deprecated sub_tenant_id the request used' }) sub_tenant_id?: string;

  @ApiPropertyOptional({ description: 'Source type of the one item a response is about: memory, file, app or app:<provider>' })
  source_type?: string;

  @ApiPropertyOptional({ type: [DeprecationNoticeDto], description: 'One notice per deprecated name or path the request used' })
  deprecation?: DeprecationNoticeDto[];
}

export class ErrorBodyDto {
  @ApiProperty({ description: 'Stable error code (docs/errors.md)', example: 'INVALID_INPUT' }) code!: string;
  @ApiProperty({ description: 'What went wrong, naming the field when there is one' }) message!: string;
}

/** Every error, on every endpoint: `{success: false, data: null, error: {code, message}, meta}`, sometimes `detail`. */
export class ErrorEnvelopeDto {
  @ApiProperty({ type: Boolean, enum: [false] }) success!: false;
  @ApiProperty({ type: 'object', additionalProperties: false, nullable: true, enum: [null], description: 'Always null on an error' }) data!: null;
  @ApiProperty({ type: ErrorBodyDto }) error!: ErrorBodyDto;
  @ApiProperty({ type: ResponseMetaDto }) meta!: ResponseMetaDto;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'A validation error on a deprecated field: error_code, message, deprecated, deprecated_field, preferred_field, success',
  })
  detail?: Record<string, unknown>;
}
