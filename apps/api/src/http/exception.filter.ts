import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorEnvelope } from './envelope';
import { DomainError } from '@crs/domain/errors';
import { mapError } from './errors';
import { mediaTypeOf, unsupportedMediaType } from './media-type';
import { contextOf } from './request-context';

/** The one exception filter: every error leaves as the spec's envelope with a stable code. */
@Catch()
export class EnvelopeExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), exception, this.logger);
  }
}

export function sendError(req: FastifyRequest, reply: FastifyReply, exception: unknown, logger?: { error(m: unknown, ...r: unknown[]): void }): void {
  let mapped = mapError(exception);
  // The framework's own 415 (a body of a type no parser takes, text/plain included) names both types, like ours.
  if (mapped.status === 415 && !(exception instanceof DomainError)) mapped = mapError(unsupportedMediaType(req, mediaTypeOf(req)));
  if (mapped.status >= 500) {
    const e = exception as Error;
    (logger ?? console).error(`request ${req.id} failed: ${e?.stack ?? String(exception)}`);
  }
  const ctx = contextOf(req);
  if (mapped.headers) for (const [k, v] of Object.entries(mapped.headers)) reply.header(k, v);
  // A body refused as too large may not have been read to its end: the connection cannot carry another request
  // (the next one on it waited for the keep-alive timeout), so it is closed after this answer.
  if (mapped.status === 413) reply.header('connection', 'close');
  reply.status(mapped.status).type('application/json').send(errorEnvelope(ctx, mapped.code, mapped.message, mapped.detail));
}
