import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { LastSyncResponse, NULLABLE_LAST_SYNC } from '../connector.response.dto';

@ApiExtraModels(LastSyncResponse)
export class ResourceStatusResponse {
  @ApiProperty() resource_id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['healthy', 'degraded', 'error', 'unauthorized'] }) status!: string;
  @ApiProperty({ type: String, nullable: true }) status_reason!: string | null;
  @ApiProperty({ enum: ['initial_sync', 'active', 'paused'] }) lifecycle!: string;
  @ApiProperty() syncing!: boolean;
  @ApiProperty(NULLABLE_LAST_SYNC as any) last_sync!: LastSyncResponse | null;
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
