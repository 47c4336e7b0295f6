import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { StepClock } from '@crs/domain/step-clock';
import type { RunnerLogger } from '@crs/persistence/projection-runner';
import { ClaimLoop } from '@crs/persistence/claim-loop';
import { claimItemsWaitingForStage, itemsWaitingForIndexing, type ItemClaim } from '@crs/projections/items/items.queries';
import type { PipelineOptions } from './pipeline-options';

export const PIPELINE_DDL = `CREATE TABLE IF NOT EXISTS pipeline_leases (
  database_id uuid NOT NULL,
  item_key text NOT NULL,
  content_version integer NOT NULL,
  owner text NOT NULL,
  lease_until timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 1,
  PRIMARY KEY (database_id, item_key)
)`;

export type ClaimedJob = ItemClaim;

/**
 * The pipeline's work queue: items waiting in the items read model's queue are claimed through leases in Postgres
 * (INSERT ... ON CONFLICT, so several workers compete safely), in batches of `batchSize`, up to `concurrency`
 * batches at once; a worker killed mid-item leaves a lease that expires and the item is redone. When nothing is
 * claimable the loop sleeps until `pollMs` passes or `wake()` is called.
 */
export class ClaimQueue {
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly loop: ClaimLoop<ClaimedJob[]>;

  constructor(
    private readonly ds: DataSource,
    private readonly options: PipelineOptions,
    private readonly steps: StepClock,
    private readonly log: RunnerLogger,
    work: (jobs: ClaimedJob[]) => Promise<void>,
  ) {
    this.loop = new ClaimLoop<ClaimedJob[]>({
      concurrency: options.concurrency,
      pollMs: options.pollMs,
      claim: (n) => this.steps.timed('claim', 0, () => this.claimBatches(n)),
      work,
      onError: (err, phase) => this.log.error({ err: (err as Error).message }, `pipeline ${phase} failed`),
    });
  }

  static async migrate(ds: DataSource): Promise<void> {
    await ds.query(PIPELINE_DDL);
  }

  start(): void {
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  depth(): Promise<number> {
    return itemsWaitingForIndexing(this.ds);
  }

  /**
   * Claims up to `n` items of a stage whose lease is free or expired: the index stage (queued, processing) first,
   * the graph stage (graph_creation) with what is left, so new content becomes searchable before older content
   * completes. Under a sustained burst the graph stage waits; `completed` then lags behind `graph_creation`.
   */
  async claim(n: number): Promise<ClaimedJob[]> {
    const indexing = await this.claimStage('index', n);
    return indexing.length < n ? [...indexing, ...(await this.claimStage('graph', n - indexing.length))] : indexing;
  }

  private async claimBatches(slots: number): Promise<ClaimedJob[][]> {
    const size = this.options.batchSize;
    const indexing = batches(await this.claimStage('index', slots * size), size);
    const free = slots - indexing.length;
    return free > 0 ? [...indexing, ...batches(await this.claimStage('graph', free * size), size)] : indexing;
  }

  private claimStage(stage: 'index' | 'graph', n: number): Promise<ClaimedJob[]> {
    return claimItemsWaitingForStage(this.ds, this.owner, this.options.leaseMs, n, stage);
  }

  /**
   * The claim query reads statuses from the read model, which may still show the old one right after a release:
   * such a claim is sorted out when its batch is loaded, which takes the stage from the item's stream.
   */
  async release(jobs: ClaimedJob[]): Promise<void> {
    if (!jobs.length) return;
    await this.ds.query(
      `DELETE FROM pipeline_leases WHERE owner = $3 AND (database_id, item_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
      [jobs.map((j) => j.database_id), jobs.map((j) => j.item_key), this.owner],
    );
  }
}

function batches<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
