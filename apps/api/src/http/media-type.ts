import type { FastifyRequest } from 'fastify';
import { DomainError } from '@crs/domain/errors';

export const MULTIPART_ROUTES: readonly string[] = ['/context/ingest', '/ingestion/upload_knowledge'];

/** 415 UNSUPPORTED_MEDIA_TYPE naming what the endpoint takes and what it got. */
export function unsupportedMediaType(req: FastifyRequest, takes: string): DomainError {
  const sent = String(req.headers['content-type'] ?? '').split(';')[0].trim();
  return new DomainError('unsupported_media_type', 'UNSUPPORTED_MEDIA_TYPE', `this endpoint takes ${takes}, not ${sent || 'a body without a Content-Type'}`);
}

/** What a route takes: multipart for the upload routes, JSON for every other. */
export function mediaTypeOf(req: FastifyRequest): string {
  const route = (req as { routeOptions?: { url?: string } }).routeOptions?.url;
  return route && MULTIPART_ROUTES.includes(route) ? 'multipart/form-data' : 'application/json';
}
