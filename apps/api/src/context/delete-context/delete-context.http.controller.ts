import { Body, Controller, Delete, Inject, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { DomainError, invalid } from '@crs/domain/errors';
import { decideItem } from '@crs/domain/items/item.decider';
import { assertCollectionName, DEFAULT_COLLECTION } from '@crs/domain/names';
import { decideOnItem } from '@crs/eventstore/item-stream';
import { authOf } from '../../http/auth.hook';
import { commandContext } from '../../http/command-context';
import { contextOf, echoSourceType } from '../../http/request-context';
import { readScope, scopeFromBodyAndQuery } from '../../http/scope';
import { APP_CONFIG, DATA_SOURCE, EVENT_STORE, PROJECTION_RUNNER } from '@crs/platform/tokens';
import { DatabaseDirectory } from '../../databases/database-directory';
import type { AppConfig } from '@crs/config';
import type { DataSource } from 'typeorm';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { findItem, parseStoreType } from '../item-view';

@ApiTags('context')
@Controller()
export class DeleteContextController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    private readonly directory: DatabaseDirectory,
  ) {}

  @Delete('context')
  @ApiOperation({ summary: 'Delete items by id (JSON body {database, collection?, ids, type?}). Each deletion is an ItemDeleted event; chunks leave the index.' })
  async remove(@Req() req: FastifyRequest, @Body() body: Record<string, unknown> | undefined) {
    // The scope may come in the query string too (as on the other deletions); the two must agree.
    const query = req.query as Record<string, unknown>;
    const input = scopeFromBodyAndQuery(body ?? {}, Object.fromEntries(['database', 'collection', 'tenant_id', 'sub_tenant_id'].filter((k) => query?.[k] !== undefined).map((k) => [k, query[k]]))) as Record<string, unknown>;
    const ctx = contextOf(req);
    const scope = readScope(ctx, input, { requireDatabase: true });
    const collection = scope.collection ? assertCollectionName(scope.collection) : DEFAULT_COLLECTION;
    ctx.scope.collection = collection;
    if (!Array.isArray(input.ids) || input.ids.length === 0 || input.ids.length > 100 || input.ids.some((x) => typeof x !== 'string' || !x)) throw invalid('ids must be an array of 1 to 100 ids');
    const store = parseStoreType(input.type);
    const db = await this.directory.resolve(authOf(req), scope.database!);
    const results: { id: string; deleted: boolean; error: string | null }[] = [];
    let last: number | null = null;
    const requested = [...new Set(input.ids as string[])];
    for (const id of requested) {
      try {
        const item = await findItem(this.ds, db.id, collection, id, store);
        if (requested.length === 1) echoSourceType(ctx, [item]);
        const ids = { databaseId: db.id, itemKey: item.item_key, itemId: id, collection, store: item.store };
        last = (await decideOnItem(this.store, commandContext(req), db.id, item.item_key, (state) => decideItem({ type: 'Delete', ids }, state))) ?? last;
        results.push({ id, deleted: true, error: null });
      } catch (err) {
        if (!(err instanceof DomainError) || err.kind === 'internal') throw err;
        results.push({ id, deleted: false, error: err.message });
      }
    }
    // Gone from the next read: the item and its webhook delivery records.
    if (last !== null) await this.runner.waitFor(last, ['items', 'webhook-outbox'], this.config.projectionWaitMs);
    const deleted = results.filter((r) => r.deleted).length;
    return { success: deleted > 0, message: `${deleted} of ${results.length} deleted`, results, deleted_count: deleted, user_memory_deleted: deleted > 0 };
  }
}
