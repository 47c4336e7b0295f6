import { ApiProperty } from '@nestjs/swagger';

/** POST /webhooks/indexing/test: the outcome of the one attempt. */
export class TestWebhookResponse {
  @ApiProperty() delivered!: boolean;
  @ApiProperty({ type: 'integer', nullable: true, description: "The receiver's HTTP status, null when none came" }) status_code!: number | null;
  @ApiProperty() message!: string;
  @ApiProperty() delivery_id!: string;
}
