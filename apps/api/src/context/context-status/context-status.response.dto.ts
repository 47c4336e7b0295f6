import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';

/** The status of one item (an id naming nothing: indexing_status not_found, and no item fields). */
export class ContextStatusEntry {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: ['queued', 'processing', 'graph_creation', 'completed', 'errored', 'not_found'] }) indexing_status!: string;
  @ApiProperty({ description: 'false when errored or not found' }) success!: boolean;
  @ApiProperty({ type: String, nullable: true }) error_code!: string | null;
  @ApiProperty({ type: String, nullable: true }) error_message!: string | null;
  @ApiProperty() message!: string;
  @ApiPropertyOptional() collection?: string;
  @ApiPropertyOptional({ enum: ['memory', 'knowledge'] }) type?: string;
  @ApiPropertyOptional({ description: 'memory, file, app or app:<provider>' }) source_type?: string;
  @ApiPropertyOptional({ type: String, nullable: true }) title?: string | null;
  @ApiPropertyOptional({ format: 'date-time' }) updated_at?: string;
}

/**
 * GET /context/status: `statuses`, one entry per item found (or not) for the ids asked; asked with a single `id`,
 * the fields of its entry at the top as well.
 */
export class ContextStatusResponse extends PartialType(ContextStatusEntry) {
  @ApiProperty({ type: [ContextStatusEntry] }) statuses!: ContextStatusEntry[];
}

export class VerifyProcessingEntry extends ContextStatusEntry {
  @ApiProperty({ description: 'The original API name of id' }) file_id!: string;
  @ApiProperty({ description: 'The original API name of id' }) source_id!: string;
}

/** POST /ingestion/verify_processing (legacy). */
export class VerifyProcessingResponse {
  @ApiProperty({ type: Boolean, enum: [true] }) success!: true;
  @ApiProperty({ type: [VerifyProcessingEntry] }) statuses!: VerifyProcessingEntry[];
  @ApiProperty({ description: '<n> of <m> completed' }) message!: string;
}
