import { ApiProperty } from '@nestjs/swagger';

export class DiscoveredResourceResponse {
  @ApiProperty({ example: 'public.orders' }) resource_id!: string;
  @ApiProperty({ example: 'table' }) resource_type!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Provider facts that help configure it (a table: columns, key, update column, row estimate)' }) details!: Record<string, unknown>;
  @ApiProperty({ description: 'Already configured on this connector' }) configured!: boolean;
}

/** GET /connectors/{id}/discover. */
export class DiscoverResourcesResponse {
  @ApiProperty({ format: 'uuid' }) connector_id!: string;
  @ApiProperty({ type: [DiscoveredResourceResponse] }) resources!: DiscoveredResourceResponse[];
}
