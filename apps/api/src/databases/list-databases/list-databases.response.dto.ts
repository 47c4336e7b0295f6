import { ApiProperty } from '@nestjs/swagger';
import { EmbedderDto, MetadataFieldDto } from '../databases.response.dto';

export class DatabaseEntry {
  @ApiProperty() database!: string;
  @ApiProperty({ enum: ['provisioning', 'ready'] }) status!: string;
  @ApiProperty({ description: 'true once the database is ready' }) provisioned!: boolean;
  @ApiProperty({ type: [MetadataFieldDto] }) metadata_schema!: MetadataFieldDto[];
  @ApiProperty({ type: EmbedderDto }) embedder!: EmbedderDto;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

/** GET /databases. */
export class ListDatabasesResponse {
  @ApiProperty({ type: [DatabaseEntry] }) databases!: DatabaseEntry[];
  @ApiProperty({ type: 'integer' }) count!: number;
}

/** GET /tenants (deprecated alias): the original SDK's shape. */
export class ListTenantsResponse {
  @ApiProperty({ type: [String] }) tenant_ids!: string[];
  @ApiProperty({ type: [String], description: 'Always empty' }) failed_tenant_ids!: string[];
  @ApiProperty() message!: string;
}
