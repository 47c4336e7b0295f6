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

@ApiTags('feedback')
@Controller()
export class SubmitFeedbackController {
  constructor(private readonly commands: CommandBus) {}

  @Post('feedback')
  @HttpCode(201)
  @ApiOperation({ summary: "Feedback about a query that already ran, linked by its request_id; every submission is stored separately (rate limit: 100 per minute per organization)" })
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
