import type { FastifyRequest } from 'fastify';
import { DomainError } from '@crs/domain/errors';
import type { CommandContext } from '@crs/eventstore/command-handling';
import { authOf } from './auth.hook';
import { contextOf } from './request-context';

/** Who is acting, for event metadata: the organization, the key prefix and the request id. */
export function commandContext(req: FastifyRequest): CommandContext {
  const auth = authOf(req);
  return { orgId: auth.orgId, actor: `key:${auth.prefix}`, requestId: contextOf(req).requestId };
}

/**
 * commandContext for a change to organization-wide configuration (the indexing webhook and its signing secret):
 * it reaches every database's events, so a key limited to some databases may not make it (403 FORBIDDEN).
 */
export function organizationCommandContext(req: FastifyRequest, action: string): CommandContext {
  const auth = authOf(req);
  if (auth.databases !== null) {
    throw new DomainError('forbidden', 'FORBIDDEN', `this API key is limited to its listed databases and cannot ${action}: that takes a key of the whole organization`);
  }
  return commandContext(req);
}
