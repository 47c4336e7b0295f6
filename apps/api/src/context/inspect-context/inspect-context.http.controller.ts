import { Controller, Get, Query, Req } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { callerOf } from '../../http/command-context';
import { contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { PRESIGNED_EXPIRY } from '../presigned-urls';
import { InspectContext } from './inspect-context.handler';
import { ApiAclQuery, ApiEnvelopedResponse, ApiErrorResponses, ApiScopeQuery } from '../../http/openapi';
import { InspectContextResponse } from './inspect-context.response.dto';

@ApiTags('context')
@Controller()
export class InspectContextController {
  constructor(private readonly queries: QueryBus) {}

  @Get('context/inspect')
  @ApiOperation({
    summary: `Content of an item as ingested: ?database=&id=&collection=&type=&mode=content|url|both&expiry_seconds=&acl=... Text content in \`content\`, binary in \`content_base64\`. mode url or both: \`presigned_url\`, a URL of this service that returns the content without an API key for expiry_seconds (${PRESIGNED_EXPIRY.min} to ${PRESIGNED_EXPIRY.max}, default ${PRESIGNED_EXPIRY.default}), and no longer once the item, its content or its ACL changes.`,
  })
  @ApiScopeQuery()
  @ApiQuery({ name: 'id', required: true, type: String, description: 'The item id' })
  @ApiQuery({ name: 'type', required: false, enum: ['memory', 'knowledge'], description: 'When both stores hold an item with the id' })
  @ApiQuery({ name: 'mode', required: false, enum: ['content', 'url', 'both'], description: 'content (default): inline; url: a presigned URL; both' })
  @ApiQuery({ name: 'expiry_seconds', required: false, schema: { type: 'integer', minimum: PRESIGNED_EXPIRY.min, maximum: PRESIGNED_EXPIRY.max, default: PRESIGNED_EXPIRY.default } })
  @ApiAclQuery()
  @ApiEnvelopedResponse(InspectContextResponse)
  @ApiErrorResponses([400, 'INVALID_INPUT (the message names the field), AMBIGUOUS_ITEM (send type), UNSUPPORTED_API_VERSION'], 401, [404, 'DATABASE_NOT_FOUND, ITEM_NOT_FOUND'])
  async inspect(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    for (const k of Object.keys(query)) if (!['database', 'tenant_id', 'collection', 'sub_tenant_id', 'id', 'type', 'mode', 'expiry_seconds', 'acl'].includes(k)) throw invalid(`${k} is not an inspect parameter`);
    const ctx = contextOf(req);
    const scope = readScope(ctx, query, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    const { view, sourceType } = await this.queries.execute(
      new InspectContext(
        callerOf(req),
        scope.database!,
        collection,
        {
          id: query.id,
          type: query.type,
          mode: query.mode,
          expirySeconds: query.expiry_seconds,
          // acl is a repeatable parameter: one value comes as a string.
          acl: query.acl === undefined ? undefined : Array.isArray(query.acl) ? query.acl : [query.acl],
        },
        `${req.protocol}://${req.headers.host ?? 'localhost'}`,
      ),
    );
    echoSourceType(ctx, [{ source_type: sourceType }]);
    return view;
  }
}
