import type { FastifyRequest } from 'fastify';
import type { CommandContext } from '../../../../libs/eventstore/src/command-handling';
import { authOf } from './auth.hook';
import { contextOf } from './request-context';

/** Who is acting, for event metadata: the organization, the key prefix and the request id. */
export function commandContext(req: FastifyRequest): CommandContext {
  const auth = authOf(req);
  return { orgId: auth.orgId, actor: `key:${auth.prefix}`, requestId: contextOf(req).requestId };
}
