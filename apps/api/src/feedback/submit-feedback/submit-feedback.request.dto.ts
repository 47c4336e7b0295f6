import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/**
 * POST /feedback. Fields are only whitelisted here (unknown fields are 400); their rules live in
 * libs/domain/src/feedback/feedback-input.ts so each failure gets its own code.
 */
export class SubmitFeedbackRequest {
  @ApiProperty({ type: String, format: 'uuid', description: "The target query's meta.request_id (or X-Request-ID header), sent exactly as received" })
  @Allow() request_id?: unknown;

  @ApiPropertyOptional({ type: String, maxLength: 8000, description: 'Free-text feedback; required unless ground_truth carries a usable answer or source_ids. Blank counts as absent.' })
  @Allow() feedback?: unknown;

  @ApiPropertyOptional({
    description: 'Expected result: answer (up to 8000 characters) and/or source_ids (up to 100 ids of ingested items, each up to 256 characters; duplicates collapse, blanks are dropped)',
    type: 'object',
    properties: { answer: { type: 'string' }, source_ids: { type: 'array', items: { type: 'string' } } },
  })
  @Allow() ground_truth?: unknown;

  @ApiPropertyOptional({ enum: ['positive', 'negative', 'neutral'], description: 'Omitted is not neutral: a comment without a rating' })
  @Allow() rating?: unknown;

  @ApiPropertyOptional({ enum: ['user', 'agent'], default: 'user' })
  @Allow() source?: unknown;

  @ApiPropertyOptional({ type: String, description: 'Scope the feedback to a database the key can reach' })
  @Allow() database?: unknown;

  @ApiPropertyOptional({ type: String, description: 'Requires database' })
  @Allow() collection?: unknown;

  @ApiPropertyOptional({ description: 'Up to 20 string entries; keys up to 64, values up to 512 characters', type: 'object', additionalProperties: { type: 'string' } })
  @Allow() metadata?: unknown;

  @ApiPropertyOptional({ type: String, deprecated: true, description: 'Deprecated alias of database' })
  @Allow() tenant_id?: unknown;

  @ApiPropertyOptional({ type: String, deprecated: true, description: 'Deprecated alias of collection; requires database or tenant_id' })
  @Allow() sub_tenant_id?: unknown;
}
