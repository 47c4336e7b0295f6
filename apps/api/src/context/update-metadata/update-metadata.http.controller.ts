import { Body, Controller, Param, Patch, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { callerOf } from '../../http/command-context';
import { contextOf, echoSourceType } from '../../http/request-context';
import { readScope, scopeFromBodyAndQuery } from '../../http/scope';
import { itemView } from '../item-view';
import { ItemSelectorQuery, UpdateMetadataRequest } from './update-metadata.request.dto';
import { UpdateItemMetadata } from './update-metadata.handler';
import { ApiEnvelopedResponse, ApiErrorResponses } from '../../http/openapi';
import { UpdateMetadataResponse } from './update-metadata.response.dto';

@ApiTags('context')
@Controller()
export class UpdateMetadataController {
  constructor(private readonly commands: CommandBus) {}

  @Patch('context/:id/metadata')
  @ApiOperation({
    summary:
      'Edit an item: metadata (schema fields), additional_metadata, title, acl. Only the fields sent change; acl: a list replaces the stored ACL exactly, [] or null revokes. `database`, `collection` (default collection when omitted) and `type` select the item, in the query string or the body. A body that changes nothing answers the item as it is.',
  })
  @ApiEnvelopedResponse(UpdateMetadataResponse)
  @ApiErrorResponses([400, 'INVALID_INPUT (the message names the field), AMBIGUOUS_ITEM (send type), UNSUPPORTED_API_VERSION'], 401, [404, 'DATABASE_NOT_FOUND, ITEM_NOT_FOUND'], 413, 415)
  async update(@Req() req: FastifyRequest, @Param('id') id: string, @Query() query: ItemSelectorQuery, @Body() body: UpdateMetadataRequest) {
    // One target: a selector given in both places with different values is refused.
    const input = scopeFromBodyAndQuery(body, query) as UpdateMetadataRequest;
    const ctx = contextOf(req);
    const scope = readScope(ctx, input, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    const edit = {
      metadata: body.metadata,
      additionalMetadata: body.additional_metadata,
      title: body.title,
      ...(body.acl !== undefined ? { acl: { value: body.acl } } : {}),
    };
    const item = await this.commands.execute(new UpdateItemMetadata(callerOf(req), scope.database!, collection, id, input.type, edit));
    ctx.scope.collection = collection;
    echoSourceType(ctx, [item]);
    return itemView(item);
  }
}
