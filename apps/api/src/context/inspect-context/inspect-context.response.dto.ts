import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** GET /context/inspect: the content inline (text or base64) and/or a presigned URL. */
export class InspectContextResponse {
  @ApiProperty({ type: Boolean, enum: [true] }) success!: true;
  @ApiProperty() id!: string;
  @ApiProperty() content_type!: string;
  @ApiProperty({ type: 'integer' }) size_bytes!: number;
  @ApiProperty({ type: String, nullable: true, description: 'mode url or both: serves the content without an API key until it expires' }) presigned_url!: string | null;
  @ApiPropertyOptional({ format: 'date-time' }) presigned_url_expires_at?: string;
  @ApiProperty({ type: String, nullable: true, description: 'Text content' }) content!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Binary content, base64' }) content_base64!: string | null;
  @ApiProperty({ type: String, nullable: true }) error!: string | null;
  @ApiProperty() message!: string;
}
