import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { map, type Observable } from 'rxjs';
import { successEnvelope } from './envelope';
import { contextOf } from './request-context';

/** Routes marked @DirectResponse() (webhook management, health) return their object as is. */
export const DIRECT_RESPONSE = 'crs:direct-response';
export const DirectResponse = () => SetMetadata(DIRECT_RESPONSE, true);

@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const direct = this.reflector.getAllAndOverride<boolean>(DIRECT_RESPONSE, [context.getHandler(), context.getClass()]);
    if (direct) return next.handle();
    const req = context.switchToHttp().getRequest<FastifyRequest>();
    return next.handle().pipe(map((data) => successEnvelope(contextOf(req), data)));
  }
}
