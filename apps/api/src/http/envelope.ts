import { API_VERSION } from '@crs/config';
import type { RequestContext } from './request-context';

export interface Meta {
  request_id: string;
  api_version: string;
  latency_ms?: number;
  deprecation?: unknown[];
  [scope: string]: unknown;
}

export function buildMeta(ctx: RequestContext, withLatency = true): Meta {
  const meta: Meta = { request_id: ctx.requestId, api_version: API_VERSION };
  if (withLatency) meta.latency_ms = Math.round(Number(process.hrtime.bigint() - ctx.startedAt) / 1e4) / 100;
  Object.assign(meta, ctx.scope);
  if (ctx.deprecations.length) meta.deprecation = ctx.deprecations;
  return meta;
}

export function successEnvelope(ctx: RequestContext, data: unknown) {
  return { success: true, data: data ?? null, error: null, meta: buildMeta(ctx) };
}

export function errorEnvelope(ctx: RequestContext, code: string, message: string, detail?: Record<string, unknown>) {
  const body: Record<string, unknown> = { success: false, data: null, error: { code, message }, meta: buildMeta(ctx) };
  if (detail) body.detail = detail;
  return body;
}
