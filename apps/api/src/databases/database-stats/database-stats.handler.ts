import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '@crs/platform/tokens';
import { itemGrowth, itemTotals } from '@crs/projections/items/items.queries';
import type { Caller } from '../../use-case/caller';
import { DatabaseDirectory } from '../database-directory';

const STATUSES = ['queued', 'processing', 'graph_creation', 'completed', 'errored'];

interface StoreStats {
  total: number;
  by_status: Record<string, number>;
  chunks: number;
  bytes: number;
}

export interface DatabaseStatsView {
  database: string;
  collection?: string;
  items: { total: number; memory: StoreStats; knowledge: StoreStats };
  chunks: { memory: number; knowledge: number; total: number };
  bytes: number;
  collections: number;
  embedder: { model: string; dimensions: number };
  growth: { date: string; items: number; bytes: number }[];
}

/** Load and growth of one database (or one of its collections). */
export class GetDatabaseStats extends Query<DatabaseStatsView> {
  constructor(readonly caller: Caller, readonly database: string, readonly collection?: string) {
    super();
  }
}

/** From the items read model's running totals; a collection being deleted counts no more. */
@QueryHandler(GetDatabaseStats)
export class GetDatabaseStatsHandler implements IQueryHandler<GetDatabaseStats> {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource, private readonly directory: DatabaseDirectory) {}

  async execute({ caller, database, collection }: GetDatabaseStats): Promise<DatabaseStatsView> {
    const db = await this.directory.resolve(caller.key, database);
    const [rows, growth, collections] = await Promise.all([
      itemTotals(this.ds, db.id, collection),
      // Growth: whole UTC days, today and the 29 before.
      itemGrowth(this.ds, db.id, collection),
      this.directory.collections(db.id),
    ]);
    const byStore = (store: string): StoreStats => {
      const mine = rows.filter((r) => r.store === store);
      return {
        total: mine.reduce((a, r) => a + r.n, 0),
        by_status: Object.fromEntries(STATUSES.map((s) => [s, mine.find((r) => r.status === s)?.n ?? 0])),
        chunks: mine.reduce((a, r) => a + r.chunks, 0),
        bytes: mine.reduce((a, r) => a + Number(r.bytes), 0),
      };
    };
    const memory = byStore('memory');
    const knowledge = byStore('knowledge');
    return {
      database: db.name,
      ...(collection ? { collection } : {}),
      items: { total: memory.total + knowledge.total, memory, knowledge },
      chunks: { memory: memory.chunks, knowledge: knowledge.chunks, total: memory.chunks + knowledge.chunks },
      bytes: memory.bytes + knowledge.bytes,
      collections: collections.length,
      embedder: { model: db.embedder.modelId, dimensions: db.embedder.dimensions },
      growth: growth.map((g) => ({ date: g.day, items: g.items, bytes: Number(g.bytes) })),
    };
  }
}
