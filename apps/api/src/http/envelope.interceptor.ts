import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { map, type Observable } from 'rxjs';
import { buildMeta, successEnvelope } from './envelope';
import { contextOf } from './request-context';

/** Routes marked @DirectResponse() (webhook management, health) return their object as is. */
export const DIRECT_RESPONSE = 'crs:direct-response';
export const DirectResponse = () => SetMetadata(DIRECT_RESPONSE, true);

/**
 * Routes marked @LegacyResponse() (the older path family) keep the original API's flat shape (`success`, `results`,
 * `chunks`, ... at the top) and add `meta`: the spec gives every API response a `meta.request_id`, and a legacy call is
 * exactly where `meta.deprecation` has something to say.
 */
export const LEGACY_RESPONSE = 'crs:legacy-response';
export const LegacyResponse = () => SetMetadata(LEGACY_RESPONSE, true);

@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const direct = this.reflector.getAllAndOverride<boolean>(DIRECT_RESPONSE, [context.getHandler(), context.getClass()]);
    if (direct) return next.handle();
    const req = context.switchToHttp().getRequest<FastifyRequest>();
    if (this.reflector.getAllAndOverride<boolean>(LEGACY_RESPONSE, [context.getHandler(), context.getClass()])) {
      return next.handle().pipe(map((data) => ({ ...(data as object), meta: buildMeta(contextOf(req)) })));
    }
    return next.handle().pipe(map((data) => successEnvelope(contextOf(req), data)));
  }
}
