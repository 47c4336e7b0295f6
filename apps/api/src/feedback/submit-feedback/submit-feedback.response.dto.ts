import { ApiProperty } from '@nestjs/swagger';

/** POST /feedback: stored, linked to its query when the service knows it. */
export class SubmitFeedbackResponse {
  @ApiProperty({ format: 'uuid' }) feedback_id!: string;
  @ApiProperty({ description: 'The query the feedback is about, as sent' }) request_id!: string;
  @ApiProperty({ type: Boolean, enum: [true] }) recorded!: true;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty() message!: string;
  @ApiProperty({ description: 'false: no query with that request_id is known (or it ran on another database); stored unlinked' }) linked!: boolean;
}
