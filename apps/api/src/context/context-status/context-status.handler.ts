import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { invalid } from '@crs/domain/errors';
import { characterLength } from '@crs/domain/text-length';
import { DATA_SOURCE } from '@crs/platform/tokens';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../../databases/database-directory';
import { itemStatuses, type StatusEntry } from '../item-status';

export const STATUS_IDS_MAX = 100;

export interface ContextStatusView {
  /** the ids asked for, each once, in the order asked */
  ids: string[];
  /** an entry per item (an id both stores hold has two), `not_found` for an id that names none */
  statuses: StatusEntry[];
}

/** The indexing status of items of a database (of one collection, when given). */
export class GetContextStatus extends Query<ContextStatusView> {
  constructor(readonly caller: Caller, readonly database: string, readonly ids: string[], readonly collection?: string) {
    super();
  }
}

/** From the items read model; an id is a non-empty string of at most 256 characters, at most 100 of them. */
@QueryHandler(GetContextStatus)
export class GetContextStatusHandler implements IQueryHandler<GetContextStatus> {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource, private readonly directory: DatabaseDirectory) {}

  async execute({ caller, database, ids, collection }: GetContextStatus): Promise<ContextStatusView> {
    const db = await this.directory.resolve(caller.key, database);
    for (const id of ids) if (typeof id !== 'string' || id.length === 0 || characterLength(id) > 256) throw invalid('ids must be non-empty strings of at most 256 characters');
    const unique = [...new Set(ids)];
    if (!unique.length) throw invalid('id (or ids) is required');
    if (unique.length > STATUS_IDS_MAX) throw invalid(`at most ${STATUS_IDS_MAX} ids per request`);
    return { ids: unique, statuses: await itemStatuses(this.ds, db.id, unique, collection) };
  }
}
