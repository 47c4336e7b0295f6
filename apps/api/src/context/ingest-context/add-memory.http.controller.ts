import { Body, Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { invalid } from '@crs/domain/errors';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { authOf } from '../../http/auth.hook';
import { commandContext } from '../../http/command-context';
import { LegacyResponse } from '../../http/envelope.interceptor';
import { addDeprecation, contextOf, echoSourceType } from '../../http/request-context';
import { readScope } from '../../http/scope';
import { DatabaseDirectory } from '../../databases/database-directory';
import { IngestionService } from '../ingestion.service';

@ApiTags('legacy')
@Controller()
export class AddMemoryController {
  constructor(private readonly ingestion: IngestionService, private readonly directory: DatabaseDirectory) {}

  @Post('memories/add_memory')
  @HttpCode(200)
  @LegacyResponse()
  @ApiOperation({
    summary: 'Legacy: add user memories. JSON {database|tenant_id, collection|sub_tenant_id, upsert?, memories: [memory items]} (memories as an array here; each item follows the memory item rules)',
    deprecated: true,
  })
  async add(@Req() req: FastifyRequest, @Body() body: Record<string, unknown> | undefined) {
    const input = body ?? {};
    for (const k of Object.keys(input)) if (!['database', 'tenant_id', 'collection', 'sub_tenant_id', 'upsert', 'memories'].includes(k)) throw invalid(`${k} is not an add_memory field`);
    const ctx = contextOf(req);
    addDeprecation(ctx, '/memories/add_memory', '/context/ingest');
    const scope = readScope(ctx, input, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    if (input.upsert !== undefined && typeof input.upsert !== 'boolean') throw invalid('upsert must be a boolean');
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const memories = typeof input.memories === 'string' ? safeJson(input.memories) : input.memories;
    const items = this.ingestion.prepareMemories(db, collection, memories, new Date());
    const result = await this.ingestion.commit(commandContext(req), db, collection, (input.upsert as boolean | undefined) ?? true, items);
    echoSourceType(ctx, items.map((i) => ({ source_type: i.event.sourceType })));
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
