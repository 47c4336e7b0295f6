import type { FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '@crs/persistence/api-keys';

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

/**
 * `meta.source_type` (spec, envelope: the type of the parent source) on a response about exactly one item: its
 * `source_type` (`memory`, `file`, `app` or `app:<provider>`, as chunks and list entries carry it). A response about
 * several items, or none in particular, carries none.
 */
export function echoSourceType(ctx: RequestContext, items: readonly { source_type: string }[]): void {
  if (items.length === 1) ctx.scope.source_type = items[0].source_type;
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
