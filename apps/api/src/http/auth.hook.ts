import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError, invalid } from '@crs/domain/errors';
import { jsonInputProblem } from '@crs/domain/nul-character';
import type { ApiKeyRepository } from '@crs/persistence/api-keys';
import { contextOf } from './request-context';
import { sendError } from './exception.filter';

/**
 * Paths served without a key (docs/api-conventions.md, "Authentication"): liveness and readiness, which orchestrators
 * probe without credentials and which tell nothing about any organization, the API documentation, and presigned
 * content URLs, whose signature is their credential (checked by their controller). `/metrics` needs a key: it counts
 * every organization's traffic.
 */
const PUBLIC = [/^\/health\/?$/, /^\/ready\/?$/, /^\/docs(\/.*|-json|-yaml)?$/, /^\/context\/presigned\/[^/]+\/?$/];

/**
 * `API-Version`: this service implements version 2 (reports 2.0.1). An absent header is served as 2;
 * `2`, `2.0`, `2.0.1` (any 2.x) are accepted; anything else is 400 UNSUPPORTED_API_VERSION.
 */
export const SUPPORTED_VERSION = /^2(\.\d+){0,2}$/;

/**
 * Authentication and version checks run in Fastify's onRequest hook, before the body is read: an
 * unauthenticated upload is refused without parsing it.
 */
export function registerAuthHook(fastify: FastifyInstance, keys: ApiKeyRepository): void {
  fastify.addHook('onRequest', async (req, reply) => {
    const ctx = contextOf(req);
    reply.header('x-request-id', ctx.requestId);
    const path = req.url.split('?')[0];
    if (PUBLIC.some((re) => re.test(path))) return;
    try {
      const header = req.headers.authorization;
      const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!match) throw new DomainError('unauthorized', 'UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <prefix>.<secret>');
      const record = await keys.verify(match[1]);
      if (!record) throw new DomainError('unauthorized', 'UNAUTHORIZED', 'Invalid or revoked API key');
      ctx.auth = record;
      const version = req.headers['api-version'];
      if (version !== undefined && !(typeof version === 'string' && SUPPORTED_VERSION.test(version.trim()))) {
        throw new DomainError('validation', 'UNSUPPORTED_API_VERSION', `API-Version '${String(version)}' is not supported; this service serves version 2 (2.0.1)`);
      }
      const problem = jsonInputProblem({ ...(req.query as object), ...(req.params as object) }, 'query string');
      if (problem) throw invalid(problem);
    } catch (err) {
      sendError(req, reply, err);
      return reply;
    }
  });
}

export function authOf(req: FastifyRequest) {
  const auth = contextOf(req).auth;
  if (!auth) throw new DomainError('unauthorized', 'UNAUTHORIZED', 'Missing API key');
  return auth;
}
