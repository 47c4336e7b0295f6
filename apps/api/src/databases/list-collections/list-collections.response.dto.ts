import { ApiProperty } from '@nestjs/swagger';

export class CollectionEntry {
  @ApiProperty() collection!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

/** GET /databases/collections. */
export class ListCollectionsResponse {
  @ApiProperty() database!: string;
  @ApiProperty({ type: [CollectionEntry] }) collections!: CollectionEntry[];
  @ApiProperty({ type: 'integer' }) count!: number;
}

/** GET /tenants/sub-tenants (deprecated alias): the original SDK's shape. */
export class ListSubTenantsResponse {
  @ApiProperty({ type: [String] }) sub_tenant_ids!: string[];
  @ApiProperty() message!: string;
}
