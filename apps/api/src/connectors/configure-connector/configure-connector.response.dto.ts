import { ApiProperty } from '@nestjs/swagger';
import { ResourceResponse } from '../connector.response.dto';

/** POST /connectors/{id}/configure: the connector's state and the resources as configured. */
export class ConfigureConnectorResponse {
  @ApiProperty({ format: 'uuid' }) connector_id!: string;
  @ApiProperty({ enum: ['healthy', 'degraded', 'error', 'unauthorized'] }) status!: string;
  @ApiProperty({ enum: ['configuring', 'initial_sync', 'active', 'paused', 'deleting'] }) lifecycle!: string;
  @ApiProperty({ type: [ResourceResponse], description: 'The listed resources, in the order sent' }) resources!: ResourceResponse[];
  @ApiProperty({ description: 'A sync of the listed resources was requested' }) sync_requested!: boolean;
}
