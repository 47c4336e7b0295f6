import { HttpException } from '@nestjs/common';
import { DomainError, type ErrorKind } from '@crs/domain/errors';

/** Every failure becomes (status, code, message, detail?). Codes are stable and listed in docs/errors.md. */
export interface MappedError {
  status: number;
  code: string;
  message: string;
  detail?: Record<string, unknown>;
  headers?: Record<string, string>;
}

const STATUS: Record<ErrorKind, number> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

export class RateLimitedError extends DomainError {
  constructor(readonly retryAfterSeconds: number, what: string) {
    super('rate_limited', 'RATE_LIMITED', `Rate limit exceeded for ${what}; retry after ${retryAfterSeconds} seconds`);
  }
}

const FASTIFY_CODES: Record<string, { code: string; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'Request body is larger than the allowed limit' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'INVALID_INPUT' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'INVALID_INPUT', message: 'Body cannot be empty when Content-Type is application/json' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { code: 'INVALID_INPUT', message: 'This endpoint expects multipart/form-data' },
  FST_REQ_FILE_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'An uploaded file is larger than the allowed limit' },
  FST_FILES_LIMIT: { code: 'PAYLOAD_TOO_LARGE', message: 'Too many files in one request' },
  FST_PARTS_LIMIT: { code: 'PAYLOAD_TOO_LARGE', message: 'Too many parts in one request' },
  FST_FIELDS_LIMIT: { code: 'PAYLOAD_TOO_LARGE', message: 'Too many fields in one request' },
};

export function mapError(err: unknown): MappedError {
  if (err instanceof RateLimitedError) {
    return { status: 429, code: err.code, message: err.message, headers: { 'retry-after': String(err.retryAfterSeconds) } };
  }
  if (err instanceof DomainError) {
    return { status: STATUS[err.kind], code: err.code, message: err.message, detail: err.detail };
  }
  if (err instanceof HttpException) {
    const status = err.getStatus();
    const res = err.getResponse() as any;
    const message = typeof res === 'string' ? res : Array.isArray(res?.message) ? res.message.join('; ') : res?.message ?? err.message;
    const code = status === 404 ? 'ROUTE_NOT_FOUND' : status === 405 ? 'METHOD_NOT_ALLOWED' : status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status < 500 ? 'INVALID_INPUT' : 'INTERNAL_ERROR';
    return { status, code, message };
  }
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (e && typeof e.code === 'string' && FASTIFY_CODES[e.code]) {
    const m = FASTIFY_CODES[e.code];
    return { status: e.statusCode ?? 400, code: m.code, message: m.message ?? e.message ?? m.code };
  }
  if (e && typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    // Fastify's own client errors, e.g. malformed JSON.
    return { status: e.statusCode, code: e.statusCode === 413 ? 'PAYLOAD_TOO_LARGE' : e.statusCode === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'INVALID_INPUT', message: e.message ?? 'Bad request' };
  }
  return { status: 500, code: 'INTERNAL_ERROR', message: 'Internal error; nothing was changed by this request unless its response said so' };
}
