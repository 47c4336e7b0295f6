import { ApiProperty } from '@nestjs/swagger';

/** For the OpenAPI document: an item as item-view.ts shows it (POST /context/list, PATCH /context/{id}/metadata). */

export class RelationIdsDto {
  @ApiProperty({ type: [String], description: 'Ids of related items' }) ids!: string[];
}

export class ContextItem {
  @ApiProperty() id!: string;
  @ApiProperty() collection!: string;
  @ApiProperty({ enum: ['memory', 'knowledge'] }) type!: 'memory' | 'knowledge';
  @ApiProperty({ description: 'memory, file, app or app:<provider>' }) source_type!: string;
  @ApiProperty({ type: String, nullable: true }) title!: string | null;
  @ApiProperty({ type: String, nullable: true }) filename!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: "Schema fields (the database's metadata_schema)" }) metadata!: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Free-form fields' }) additional_metadata!: Record<string, unknown>;
  @ApiProperty({ type: [String], nullable: true, description: 'Principals that may see the item; null: unrestricted' }) acl!: string[] | null;
  @ApiProperty({ type: RelationIdsDto }) relations!: RelationIdsDto;
  @ApiProperty({ type: String, nullable: true }) app_kind!: string | null;
  @ApiProperty({ type: String, nullable: true }) app_provider!: string | null;
  @ApiProperty({ enum: ['queued', 'processing', 'graph_creation', 'completed', 'errored'] }) indexing_status!: string;
  @ApiProperty({ type: String, nullable: true }) error_code!: string | null;
  @ApiProperty({ type: 'integer' }) chunk_count!: number;
  @ApiProperty({ type: 'integer' }) bytes!: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) expires_at!: string | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}
