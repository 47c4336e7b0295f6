import { Controller, Get, Param, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DirectResponse } from '../../http/envelope.interceptor';
import { GetPresignedContent } from './presigned-content.handler';
import { ApiErrorResponses, ApiRawResponse } from '../../http/openapi';

/** A stored content type as a response header: a plain `type/subtype`, text with its charset; anything else is bytes. */
function contentTypeHeader(stored: string): string {
  if (!/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i.test(stored)) return 'application/octet-stream';
  return /^text\/|json|xml|csv|markdown/.test(stored) ? `${stored}; charset=utf-8` : stored;
}

/**
 * The content behind a presigned URL (made by GET /context/inspect with mode url or both): served without an API key
 * to whoever holds the URL (the handler decides whether it still may be). The answer is the bytes as ingested, never
 * cached, and sandboxed (a stored HTML page runs nothing on the service's origin).
 */
@ApiTags('context')
@Controller()
@DirectResponse()
export class PresignedContentController {
  constructor(private readonly queries: QueryBus) {}

  @Get('context/presigned/:token')
  @ApiOperation({
    summary:
      'Content of an item through a presigned URL from GET /context/inspect (mode url or both). No API key. 403 PRESIGNED_URL_INVALID / _EXPIRED / _REVOKED (the ACL, content or the asking key changed), 404 ITEM_NOT_FOUND once the item, its collection or database is gone.',
  })
  @ApiRawResponse('application/octet-stream', { type: 'string', format: 'binary' }, 'The bytes as ingested, with their stored Content-Type (text with charset=utf-8)')
  @ApiErrorResponses([403, 'PRESIGNED_URL_INVALID, PRESIGNED_URL_EXPIRED, PRESIGNED_URL_REVOKED'], [404, 'ITEM_NOT_FOUND: the item, its collection or its database is gone'])
  async content(@Param('token') token: string, @Res() reply: FastifyReply) {
    const { bytes, contentType, filename } = await this.queries.execute(new GetPresignedContent(token));
    reply
      .header('content-type', contentTypeHeader(contentType))
      .header('content-disposition', filename ? `inline; filename*=UTF-8''${encodeURIComponent(filename)}` : 'inline')
      .header('cache-control', 'private, no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "sandbox; default-src 'none'")
      .header('referrer-policy', 'no-referrer')
      .send(bytes);
  }
}
