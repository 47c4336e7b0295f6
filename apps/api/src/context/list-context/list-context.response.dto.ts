import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ContextItem } from '../item-view.response.dto';

export class ListedMemory extends ContextItem {
  @ApiProperty() memory_id!: string;
  @ApiProperty({ type: String, nullable: true, description: 'The memory as ingested (pairs as a User/Assistant transcript)' }) memory_content!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'What inference derived from it' }) inferred_content!: string | null;
}

export class ListedSource extends ContextItem {
  @ApiPropertyOptional({ type: String, nullable: true, description: "With include_fields ['content']: the text (null for binary files)" }) content?: string | null;
}

export class PaginationDto {
  @ApiProperty({ type: 'integer' }) page!: number;
  @ApiProperty({ type: 'integer' }) page_size!: number;
  @ApiProperty({ type: 'integer' }) total!: number;
  @ApiProperty({ type: 'integer' }) total_pages!: number;
  @ApiProperty() has_next!: boolean;
  @ApiProperty() has_previous!: boolean;
}

/** POST /context/list: `user_memories` for type memory, `sources` for knowledge. */
export class ListContextResponse {
  @ApiProperty({ type: Boolean, enum: [true] }) success!: true;
  @ApiPropertyOptional({ type: [ListedMemory], description: 'type memory' }) user_memories?: ListedMemory[];
  @ApiPropertyOptional({ type: [ListedSource], description: 'type knowledge' }) sources?: ListedSource[];
  @ApiProperty({ type: 'integer' }) total!: number;
  @ApiProperty({ type: PaginationDto }) pagination!: PaginationDto;
}
