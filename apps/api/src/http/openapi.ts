import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiQuery, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorEnvelopeDto, ResponseMetaDto } from './envelope.response.dto';

/*
 * Decorators that describe an operation's answers in the OpenAPI document, envelope included
 * (docs/api-conventions.md): an enveloped route answers `{success: true, data, error: null, meta}`, a legacy route
 * its flat object plus `meta`, a direct route (webhook management, health) the object itself, and every error the
 * error envelope. They describe only: what a route answers is decided by envelope.interceptor.ts and the controller.
 */

/** What each error status means across the API; an operation may name its own codes instead. */
const ERRORS: Record<number, string> = {
  400: 'INVALID_INPUT (the message names the field), UNSUPPORTED_API_VERSION',
  401: 'UNAUTHORIZED: missing, malformed, unknown or revoked API key',
  403: 'FORBIDDEN',
  404: 'DATABASE_NOT_FOUND: the database does not exist, is being deleted or the key cannot reach it',
  409: 'Conflict with the current state',
  413: 'PAYLOAD_TOO_LARGE: the body is over the limits',
  415: 'UNSUPPORTED_MEDIA_TYPE: the body is not of the type the endpoint takes',
  422: 'The request contradicts itself',
  429: 'RATE_LIMITED: retry after the seconds in the Retry-After header',
  500: 'INTERNAL_ERROR',
  503: 'Unavailable',
};

/** An error status with the description shared by the API, or with the codes this operation answers. */
export type ErrorSpec = number | [status: number, description: string];

/** The error envelope for each status given. */
export function ApiErrorResponses(...errors: ErrorSpec[]) {
  return applyDecorators(
    ApiExtraModels(ErrorEnvelopeDto),
    ...errors.map((e) => {
      const [status, description] = typeof e === 'number' ? [e, ERRORS[e] ?? 'Error'] : e;
      return ApiResponse({ status, description: `Error envelope. ${description}`, schema: { $ref: getSchemaPath(ErrorEnvelopeDto) } });
    }),
  );
}

/** `{success: true, data: <model>, error: null, meta}`. */
export function ApiEnvelopedResponse(model: Type<unknown>, status = 200, description = 'Success, in the envelope') {
  return applyDecorators(
    ApiExtraModels(model, ResponseMetaDto),
    ApiResponse({
      status,
      description,
      schema: {
        type: 'object',
        required: ['success', 'data', 'error', 'meta'],
        properties: {
          success: { type: 'boolean', enum: [true] },
          data: { $ref: getSchemaPath(model) },
          error: { type: 'object', nullable: true, enum: [null], description: 'Always null on a success' },
          meta: { $ref: getSchemaPath(ResponseMetaDto) },
        },
      },
    }),
  );
}

/** A legacy route's answer: the original API's flat object, plus `meta`. */
export function ApiLegacyResponse(model: Type<unknown>, status = 200, description = 'Success: the original flat shape, plus meta') {
  return applyDecorators(
    ApiExtraModels(model, ResponseMetaDto),
    ApiResponse({
      status,
      description,
      schema: {
        allOf: [
          { $ref: getSchemaPath(model) },
          { type: 'object', required: ['meta'], properties: { meta: { $ref: getSchemaPath(ResponseMetaDto) } } },
        ],
      },
    }),
  );
}

/** A direct route's answer: the object itself, outside the envelope. */
export function ApiDirectResponse(model: Type<unknown>, status = 200, description = 'Success: the object itself, not in the envelope') {
  return applyDecorators(ApiExtraModels(model), ApiResponse({ status, description, schema: { $ref: getSchemaPath(model) } }));
}

/** A route that answers bytes or text rather than JSON. */
export function ApiRawResponse(contentType: string, schema: { type: 'string'; format?: string }, description: string, status = 200) {
  return ApiResponse({ status, description, content: { [contentType]: { schema } } });
}

/**
 * The scope parameters of a query string: `database` (or its deprecated alias `tenant_id`) and `collection` (or
 * `sub_tenant_id`). Every scoped endpoint needs the database under one of the two names.
 */
export function ApiScopeQuery(opts: { collection?: string } = {}) {
  return applyDecorators(
    ApiQuery({ name: 'database', required: false, type: String, description: 'The database (required, under this name or tenant_id)' }),
    ApiQuery({ name: 'tenant_id', required: false, type: String, deprecated: true, description: 'Deprecated alias of database' }),
    ApiQuery({ name: 'collection', required: false, type: String, description: opts.collection ?? 'Default collection when omitted' }),
    ApiQuery({ name: 'sub_tenant_id', required: false, type: String, deprecated: true, description: 'Deprecated alias of collection' }),
  );
}

/** `acl`, a repeatable query parameter: the principals a read runs on behalf of (as in /query). */
export const ApiAclQuery = () =>
  ApiQuery({ name: 'acl', required: false, schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true, description: 'Principals the read runs on behalf of, same meaning as in /query (omitted: no filtering)' });
