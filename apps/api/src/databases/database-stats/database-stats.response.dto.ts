import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { EmbedderDto } from '../databases.response.dto';

export class StoreStatsDto {
  @ApiProperty({ type: 'integer' }) total!: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    description: 'Items per indexing status: queued, processing, graph_creation, completed, errored',
  })
  by_status!: Record<string, number>;
  @ApiProperty({ type: 'integer' }) chunks!: number;
  @ApiProperty({ type: 'integer' }) bytes!: number;
}

export class ItemTotalsDto {
  @ApiProperty({ type: 'integer' }) total!: number;
  @ApiProperty({ type: StoreStatsDto }) memory!: StoreStatsDto;
  @ApiProperty({ type: StoreStatsDto }) knowledge!: StoreStatsDto;
}

export class ChunkTotalsDto {
  @ApiProperty({ type: 'integer' }) memory!: number;
  @ApiProperty({ type: 'integer' }) knowledge!: number;
  @ApiProperty({ type: 'integer' }) total!: number;
}

export class GrowthDayDto {
  @ApiProperty({ format: 'date', description: 'A UTC day' }) date!: string;
  @ApiProperty({ type: 'integer' }) items!: number;
  @ApiProperty({ type: 'integer' }) bytes!: number;
}

/** GET /databases/stats. */
export class DatabaseStatsResponse {
  @ApiProperty() database!: string;
  @ApiPropertyOptional({ description: 'When the request named one' }) collection?: string;
  @ApiProperty({ type: ItemTotalsDto }) items!: ItemTotalsDto;
  @ApiProperty({ type: ChunkTotalsDto }) chunks!: ChunkTotalsDto;
  @ApiProperty({ type: 'integer' }) bytes!: number;
  @ApiProperty({ type: 'integer', description: 'Active collections of the database' }) collections!: number;
  @ApiProperty({ type: EmbedderDto }) embedder!: EmbedderDto;
  @ApiProperty({ type: [GrowthDayDto], description: 'Today and the 29 UTC days before' }) growth!: GrowthDayDto[];
}

export class TenantCollectionStatsDto {
  @ApiProperty({ type: 'integer' }) row_count!: number;
  @ApiProperty({ type: 'integer' }) dimensions!: number;
}

/** GET /tenants/stats (deprecated alias): the original SDK's shape. */
export class TenantStatsResponse {
  @ApiProperty() tenant_id!: string;
  @ApiProperty({ type: TenantCollectionStatsDto }) knowledge_collection!: TenantCollectionStatsDto;
  @ApiProperty({ type: TenantCollectionStatsDto }) memory_collection!: TenantCollectionStatsDto;
  @ApiProperty() message!: string;
}
