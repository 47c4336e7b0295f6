import { ApiProperty } from '@nestjs/swagger';

/** POST /connectors/{id}/sync: the sync was requested; the scheduler starts it. */
export class SyncConnectorResponse {
  @ApiProperty({ format: 'uuid' }) connector_id!: string;
  @ApiProperty({ type: Boolean, enum: [true] }) sync_requested!: true;
  @ApiProperty({ type: [String], description: 'The resources the sync covers' }) resources!: string[];
  @ApiProperty({ description: 'The connector is paused: this manual sync runs, scheduled ones stay off' }) paused!: boolean;
}
