import { ApiProperty } from '@nestjs/swagger';

/** DELETE /connectors/{id}: accepted; the connector is gone from every read, its content handled per `content`. */
export class DeleteConnectorResponse {
  @ApiProperty({ format: 'uuid' }) connector_id!: string;
  @ApiProperty({ type: Boolean, enum: [true] }) deletion_requested!: true;
  @ApiProperty({ enum: ['delete', 'keep'] }) content!: string;
}
