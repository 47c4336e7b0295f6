import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { DomainError } from '@crs/domain/errors';
import { decideItem } from '@crs/domain/items/item.decider';
import type { Store } from '@crs/domain/items/item.events';
import type { AppConfig } from '@crs/config';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { decideOnItem } from '@crs/eventstore/item-stream';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { APP_CONFIG, DATA_SOURCE, EVENT_STORE, PROJECTION_RUNNER } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../../databases/database-directory';
import { findItem } from '../item-view';

export interface DeleteContextResult {
  results: { id: string; deleted: boolean; error: string | null }[];
  /** The deleted item's source type when one id was asked for (echoed in the response metadata). */
  sourceType: string | null;
}

/** Delete items of one collection by id. */
export class DeleteContext extends Command<DeleteContextResult> {
  constructor(readonly caller: Caller, readonly database: string, readonly collection: string, readonly ids: string[], readonly store?: Store) {
    super();
  }
}

/**
 * Each id is decided on its item's stream (ItemDeleted); an id that is not found or not deletable gets its own error
 * and the others go ahead. Waits until the items and webhook outbox read models show the deletions, so the next read
 * returns neither the items nor their delivery records.
 */
@CommandHandler(DeleteContext)
export class DeleteContextHandler implements ICommandHandler<DeleteContext> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    private readonly directory: DatabaseDirectory,
  ) {}

  async execute({ caller, database, collection, ids, store }: DeleteContext): Promise<DeleteContextResult> {
    const db = await this.directory.resolve(caller.key, database);
    const results: DeleteContextResult['results'] = [];
    let sourceType: string | null = null;
    let last: number | null = null;
    const requested = [...new Set(ids)];
    for (const id of requested) {
      try {
        const item = await findItem(this.ds, db.id, collection, id, store);
        if (requested.length === 1) sourceType = item.source_type;
        const target = { databaseId: db.id, itemKey: item.item_key, itemId: id, collection, store: item.store };
        last = (await decideOnItem(this.store, caller.ctx, db.id, item.item_key, (state) => decideItem({ type: 'Delete', ids: target }, state))) ?? last;
        results.push({ id, deleted: true, error: null });
      } catch (err) {
        if (!(err instanceof DomainError) || err.kind === 'internal') throw err;
        results.push({ id, deleted: false, error: err.message });
      }
    }
    if (last !== null) await this.runner.waitFor(last, ['items', 'webhook-outbox'], this.config.projectionWaitMs);
    return { results, sourceType };
  }
}
