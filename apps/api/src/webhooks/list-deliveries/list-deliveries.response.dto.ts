import { ApiProperty } from '@nestjs/swagger';
import { DeliveryRecord } from '../delivery.response.dto';

/** GET /webhooks/indexing/deliveries: a page, newest first. */
export class DeliveryPageResponse {
  @ApiProperty({ type: [DeliveryRecord] }) deliveries!: DeliveryRecord[];
  @ApiProperty({ type: 'integer' }) count!: number;
  @ApiProperty({ type: String, nullable: true, description: 'cursor of the next page; null on the last' }) next_cursor!: string | null;
}
