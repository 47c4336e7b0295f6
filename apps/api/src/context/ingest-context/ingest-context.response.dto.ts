import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class IngestResultItem {
  @ApiProperty({ description: 'The item id (generated when the request gave none)' }) id!: string;
  @ApiProperty({ enum: ['queued', 'failed'] }) status!: 'queued' | 'failed';
  @ApiPropertyOptional({ description: 'Memories: whether inference runs on it' }) infer?: boolean;
  @ApiPropertyOptional({ type: String, nullable: true }) title?: string | null;
  @ApiPropertyOptional({ description: 'Files: the uploaded file name' }) filename?: string;
  @ApiPropertyOptional({ description: 'A failed item: why' }) error?: string;
  @ApiPropertyOptional({ description: 'A failed item: its code, e.g. ITEM_EXISTS' }) error_code?: string;
}

/** POST /context/ingest and POST /memories/add_memory: a result per item, in request order. */
export class IngestContextResponse {
  @ApiProperty({ description: 'At least one item was queued' }) success!: boolean;
  @ApiProperty() message!: string;
  @ApiProperty({ type: [IngestResultItem] }) results!: IngestResultItem[];
  @ApiProperty({ type: 'integer' }) success_count!: number;
  @ApiProperty({ type: 'integer' }) failed_count!: number;
}

export class UploadKnowledgeResultItem extends IngestResultItem {
  @ApiProperty({ description: 'The original API name of id' }) source_id!: string;
}

/** POST /ingestion/upload_knowledge (legacy): each result also carries source_id. */
export class UploadKnowledgeResponse {
  @ApiProperty({ description: 'At least one item was queued' }) success!: boolean;
  @ApiProperty() message!: string;
  @ApiProperty({ type: [UploadKnowledgeResultItem] }) results!: UploadKnowledgeResultItem[];
  @ApiProperty({ type: 'integer' }) success_count!: number;
  @ApiProperty({ type: 'integer' }) failed_count!: number;
}
