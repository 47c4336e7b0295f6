import type { FastifyRequest } from 'fastify';
import type { CommandContext } from '@crs/eventstore/command-handling';
import type { Caller } from '../use-case/caller';
import { authOf } from './auth.hook';
import { contextOf } from './request-context';

/** Who is acting, for event metadata: the organization, the key prefix and the request id. */
export function commandContext(req: FastifyRequest): CommandContext {
  const auth = authOf(req);
  return { orgId: auth.orgId, actor: `key:${auth.prefix}`, requestId: contextOf(req).requestId };
}

/** The caller of a command or query: the request's API key and the context its events record. */
export function callerOf(req: FastifyRequest): Caller {
  return { key: authOf(req), ctx: commandContext(req) };
}
