import type { DataSource } from 'typeorm';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { loadItemStates, type ItemStateCache } from '@crs/eventstore/item-stream';
import { streams } from '@crs/domain/streams';
import type { StepClock } from '@crs/domain/step-clock';
import { itemsByKeys } from '@crs/projections/items/items.queries';
import { databaseOwnersAndEmbedders } from '@crs/projections/databases/databases.queries';
import type { ClaimedJob } from '../claim-queue';
import type { PipelineItem, Work } from './work';

/** A claimed batch sorted by what is left to do for each item. */
export interface LoadedBatch {
  indexing: Work[];
  graphing: Work[];
  /** nothing to do: their leases are released */
  gone: ClaimedJob[];
}

/** Loads a claimed batch's rows and item streams, and sorts its items into the index and graph stages. */
export class BatchLoader {
  constructor(
    private readonly ds: DataSource,
    private readonly store: EventStore,
    private readonly steps: StepClock,
  ) {}

  async load(jobs: ClaimedJob[], streamStates: ItemStateCache): Promise<LoadedBatch> {
    const rows: PipelineItem[] = await this.steps.timed('batch.load', jobs.length, () => this.loadItems(jobs));
    const byKey = new Map(rows.map((r) => [`${r.database_id}/${r.item_key}`, r]));
    // The stage comes from the item's stream, not the read model: a claim made while the read model lagged
    // behind a status move must neither redo the step nor skip the next.
    const states = await loadItemStates(this.store, jobs.map((j) => ({ databaseId: j.database_id, itemKey: j.item_key })), streamStates);
    const indexing: Work[] = [];
    const graphing: Work[] = [];
    const gone: ClaimedJob[] = [];
    for (const job of jobs) {
      const item = byKey.get(`${job.database_id}/${job.item_key}`);
      const state = states.get(streams.item(job.database_id, job.item_key));
      const w: Work | undefined = item && { job, item, ctx: { orgId: item.org_id, actor: 'system:pipeline', databaseId: item.database_id } };
      // Deleted, superseded by a newer version, or already finished: nothing to do.
      if (!w || !state?.live || item!.content_version !== job.content_version || state.contentVersion !== job.content_version) gone.push(job);
      else if (state.status === 'queued' || state.status === 'processing') indexing.push(w);
      else if (state.status === 'graph_creation') graphing.push({ ...w, graphed: state.graphed === true });
      else gone.push(job);
    }
    return { indexing, graphing, gone };
  }

  /**
   * The claimed items' rows and their databases' org and embedder, in two queries. One join of the three (keys,
   * items, databases) let the planner, on the fresh statistics of a young database, scan every item of the database
   * once per key (seen at 300 ms per batch, growing with the database); the items alone by their primary key have no
   * such plan.
   */
  private async loadItems(jobs: ClaimedJob[]): Promise<PipelineItem[]> {
    const items = await itemsByKeys(this.ds, jobs.map((j) => j.database_id), jobs.map((j) => j.item_key));
    if (!items.length) return [];
    const dbs = await databaseOwnersAndEmbedders(this.ds, [...new Set(items.map((i) => i.database_id))]);
    const byId = new Map(dbs.map((d) => [d.id, d]));
    return items.flatMap((i) => {
      const d = byId.get(i.database_id);
      return d ? [{ ...i, org_id: d.org_id, embedder: d.embedder }] : [];
    });
  }
}
