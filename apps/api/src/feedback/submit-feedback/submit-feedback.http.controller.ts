import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '@crs/domain/errors';
import { normalizeFeedback } from '@crs/domain/feedback/feedback-input';
import { assertCollectionName } from '@crs/domain/names';
import { callerOf } from '../../http/command-context';
import { contextOf, type RequestContext } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { SubmitFeedbackRequest } from './submit-feedback.request.dto';
import { SubmitFeedback } from './submit-feedback.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { SubmitFeedbackResponse } from './submit-feedback.response.dto';

@ApiTags('feedback')
@Controller()
export class SubmitFeedbackController {
  constructor(private readonly commands: CommandBus) {}

  @Post('feedback')
  @HttpCode(201)
  @ApiOperation({ summary: "Feedback about a query that already ran, linked by its request_id; every submission is stored separately (rate limit: 100 per minute per organization)" })
  @ApiEnvelopedResponse(SubmitFeedbackResponse, 201, 'Recorded')
  @ApiErrorResponses(
    [400, 'INVALID_INPUT, FEEDBACK_EMPTY, FEEDBACK_TOO_LONG, TOO_MANY_SOURCE_IDS, SOURCE_ID_TOO_LONG, INVALID_RATING, INVALID_SOURCE, METADATA_TOO_LARGE, UNSUPPORTED_API_VERSION'],
    401,
    404,
    413,
    415,
    [429, 'RATE_LIMITED: 100 submissions per minute per organization; retry after the seconds in the Retry-After header'],
    [500, 'FEEDBACK_NOT_RECORDED: nothing was stored, retrying is safe'],
  )
  async submit(@Req() req: FastifyRequest, @Body() body: SubmitFeedbackRequest) {
    const ctx = contextOf(req);
    const input: SubmitFeedbackRequest = body ?? {};
    try {
      const scope = readScope(ctx, input, { requireDatabase: false });
      if (scope.collection) assertCollectionName(scope.collection, input.collection != null ? 'collection' : 'sub_tenant_id');
      const feedback = normalizeFeedback(input);
      return await this.commands.execute(new SubmitFeedback(callerOf(req), scope.database ?? null, scope.collection ?? null, feedback));
    } catch (err) {
      throw withDeprecationDetail(ctx, err);
    }
  }
}

/** A validation failure of a request that used a deprecated alias carries `detail` naming it (spec: Errors). */
function withDeprecationDetail(ctx: RequestContext, err: unknown): unknown {
  if (!(err instanceof DomainError) || err.kind !== 'validation' || err.detail) return err;
  const notice = ctx.deprecations.find((d) => d.deprecated_field === 'tenant_id' || d.deprecated_field === 'sub_tenant_id');
  if (!notice) return err;
  return new DomainError(err.kind, err.code, err.message, {
    error_code: err.code,
    message: err.message,
    deprecated: true,
    deprecated_field: notice.deprecated_field,
    preferred_field: notice.preferred_field,
    success: false,
  });
}
