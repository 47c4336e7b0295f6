import { ApiProperty } from '@nestjs/swagger';
import { LastSyncResponse } from '../connector.response.dto';

export class ResourceStatusResponse {
  @ApiProperty() resource_id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['healthy', 'degraded', 'error', 'unauthorized'] }) status!: string;
  @ApiProperty({ type: String, nullable: true }) status_reason!: string | null;
  @ApiProperty({ enum: ['initial_sync', 'active', 'paused'] }) lifecycle!: string;
  @ApiProperty() syncing!: boolean;
  @ApiProperty({ type: LastSyncResponse, nullable: true }) last_sync!: LastSyncResponse | null;
}

/** GET /connectors/{id}/status. */
export class ConnectorStatusResponse {
  @ApiProperty({ format: 'uuid' }) connector_id!: string;
  @ApiProperty({ enum: ['healthy', 'degraded', 'error', 'unauthorized'], description: 'The worst of its resources; healthy with none' }) status!: string;
  @ApiProperty({ type: String, nullable: true }) status_reason!: string | null;
  @ApiProperty({ enum: ['configuring', 'initial_sync', 'active', 'paused', 'deleting'] }) lifecycle!: string;
  @ApiProperty() paused!: boolean;
  @ApiProperty({ type: [ResourceStatusResponse] }) resources!: ResourceStatusResponse[];
}
