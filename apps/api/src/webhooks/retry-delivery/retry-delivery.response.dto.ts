import { ApiProperty } from '@nestjs/swagger';

/** POST /webhooks/indexing/deliveries/{delivery_id}/retry. */
export class RetryDeliveryResponse {
  @ApiProperty() delivery_id!: string;
  @ApiProperty({ type: Boolean, enum: [true] }) queued!: true;
  @ApiProperty() message!: string;
}
