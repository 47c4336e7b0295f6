import { ApiProperty } from '@nestjs/swagger';
import { DELIVERY_STATUSES } from '@crs/domain/webhooks/webhook.events';

/** A delivery record (delivery-view.ts), as the deliveries endpoints answer it. */
export class DeliveryRecord {
  @ApiProperty() delivery_id!: string;
  @ApiProperty({ description: 'The item id the event is about' }) doc_id!: string;
  @ApiProperty({ enum: [...DELIVERY_STATUSES] }) status!: string;
  @ApiProperty() indexing_status!: string;
  @ApiProperty({ example: 'indexing.status_changed' }) event_type!: string;
  @ApiProperty({ type: 'integer' }) attempts!: number;
  @ApiProperty({ type: String, nullable: true }) error_code!: string | null;
  @ApiProperty({ type: String, nullable: true }) error_message!: string | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
  @ApiProperty() database!: string;
  @ApiProperty() collection!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'While an attempt is due' }) next_attempt_at!: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) last_status_code!: number | null;
}
