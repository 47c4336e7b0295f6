import type { FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '../../../../libs/persistence/src/api-keys';

/** A deprecation notice as the spec defines it (meta.deprecation[]). */
export interface DeprecationNotice {
  deprecated: true;
  deprecated_field: string;
  deprecated_since: string;
  message: string;
  preferred_field: string;
}

/** Per-request state the envelope and handlers share; attached to the Fastify request. */
export interface RequestContext {
  requestId: string;
  startedAt: bigint;
  auth?: ApiKeyRecord;
  deprecations: DeprecationNotice[];
  /** Scope echoed in meta (database, collection, deprecated tenant_id/sub_tenant_id, source_type). */
  scope: Record<string, string>;
}

export function contextOf(req: FastifyRequest): RequestContext {
  const r = req as FastifyRequest & { crs?: RequestContext };
  if (!r.crs) r.crs = { requestId: String(req.id), startedAt: process.hrtime.bigint(), deprecations: [], scope: {} };
  return r.crs;
}

export function addDeprecation(ctx: RequestContext, deprecatedField: string, preferredField: string, since = '2.0.1'): void {
  if (ctx.deprecations.some((d) => d.deprecated_field === deprecatedField)) return;
  ctx.deprecations.push({
    deprecated: true,
    deprecated_field: deprecatedField,
    deprecated_since: since,
    message: `'${deprecatedField}' is deprecated since ${since}; use '${preferredField}' instead`,
    preferred_field: preferredField,
  });
}
