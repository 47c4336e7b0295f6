import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { callerOf } from '../../http/command-context';
import { LegacyResponse } from '../../http/envelope.interceptor';
import { addDeprecation, contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { AddMemoryRequest } from './ingest-context.request.dto';
import { IngestContext } from './ingest-context.handler';
import { ApiErrorResponses, ApiLegacyResponse } from '../../http/openapi';
import { IngestContextResponse } from './ingest-context.response.dto';

@ApiTags('legacy')
@Controller()
export class AddMemoryController {
  constructor(private readonly commands: CommandBus) {}

  @Post('memories/add_memory')
  @HttpCode(200)
  @LegacyResponse()
  @ApiOperation({
    summary: 'Legacy: add user memories. JSON {database|tenant_id, collection|sub_tenant_id, upsert?, memories: [memory items]} (memories as an array here; each item follows the memory item rules)',
    deprecated: true,
  })
  @ApiLegacyResponse(IngestContextResponse)
  @ApiErrorResponses(400, 401, 404, [409, 'COLLECTION_DELETING: the collection is being deleted'], 413, 415)
  async add(@Req() req: FastifyRequest, @Body() body: AddMemoryRequest) {
    const ctx = contextOf(req);
    addDeprecation(ctx, '/memories/add_memory', '/context/ingest');
    const scope = readScope(ctx, body, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    const memories = typeof body.memories === 'string' ? safeJson(body.memories) : body.memories;
    const { result, sourceTypes } = await this.commands.execute(new IngestContext(callerOf(req), scope.database!, collection, body.upsert ?? true, { type: 'memory', memories }));
    echoSourceType(ctx, sourceTypes.map((source_type) => ({ source_type })));
    return result;
  }
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    throw invalid('memories must be an array (or a JSON-encoded array)');
  }
}
