import { ApiProperty } from '@nestjs/swagger';

/** DELETE /connectors/{id}/resources/{resource_id}: accepted; the synced documents are handled per `content`. */
export class RemoveResourceResponse {
  @ApiProperty({ format: 'uuid' }) connector_id!: string;
  @ApiProperty() resource_id!: string;
  @ApiProperty({ type: Boolean, enum: [true] }) removed!: true;
  @ApiProperty({ enum: ['delete', 'keep'] }) content!: string;
}
