import type { SyncTrigger } from '@crs/domain/connectors/connector.events';
import { hasCompletedSync } from '@crs/domain/connectors/connector-status';
import type { ResourceState } from '@crs/domain/connectors/resource.decider';
import type { SyncRequests } from '@crs/connectors/sync-requests';
import type { Sql } from '@crs/persistence/data-source';
import type { RunnerLogger } from '@crs/persistence/projection-runner';
import { connectorResources, dueResources, type ConnectorResourceRow } from '@crs/projections/connectors/connectors.queries';
import type { Clock, ResourceSync, SyncResult } from './resource-sync';

export interface SchedulerSettings {
  /** syncs this process runs at once */
  concurrency: number;
  /** the idle poll */
  pollMs: number;
}

interface Candidate {
  orgId: string;
  connectorId: string;
  resourceId: string;
  trigger: SyncTrigger;
}

interface Running {
  connectorId: string;
  abort: AbortController;
  done: Promise<void>;
}

/** A sync that has not completed one of its current generation is the resource's initial sync. */
const triggerFor = (state: ResourceState, asked: boolean): SyncTrigger => (!hasCompletedSync(state) ? 'initial' : asked ? 'manual' : 'scheduled');

/**
 * The connector scheduler (docs/connectors.md, "Sync engine"), run in the worker role of every process. Each round it
 * takes "sync now" requests and the resources `dueResources` says are due, and starts their syncs, at most
 * `concurrency` at once and one per connector. Which process syncs a resource is decided by the log: `StartSync` on
 * the resource stream holds a lease, so a second process's start conflicts on the stream's revision or is refused
 * with SYNC_RUNNING; a lease that expired (its process died) is taken over. Requests wake it at once in the process
 * that made them; other processes see them on their next poll.
 */
export class ConnectorScheduler {
  private readonly running = new Map<string, Running>();
  /** requests taken but not started yet (their connector was busy): a nudge, kept in memory only */
  private pending: Candidate[] = [];
  private stopped = true;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly requests: SyncRequests,
    private readonly engine: ResourceSync,
    private readonly log: RunnerLogger,
    private readonly settings: SchedulerSettings,
    private readonly clock: Clock = () => new Date(),
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.requests.onRequest(() => this.wake());
    this.loop = this.run();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops scheduling, stops the running syncs at their next page (each recorded as deferred, `stopped`), and waits. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.wake();
    for (const r of this.running.values()) r.abort.abort(new Error('the worker is stopping'));
    await this.loop;
    await this.idle();
  }

  /** Resolves once no sync runs in this process. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /** The syncs running in this process, by resource (`<connectorId>/<resourceId>`). */
  runningResources(): string[] {
    return [...this.running.keys()];
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.tick();
      } catch (err) {
        this.log.error({ err: err instanceof Error ? err.message : String(err) }, 'connector scheduler round failed');
      }
      if (this.stopped) break;
      await this.sleep(this.settings.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref?.();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        this.woken = false;
        done();
      };
    });
  }

  /**
   * One round: starts what may start now and returns the results' promises (tests await them). Requests first (a
   * person asked), then due resources, oldest first.
   */
  async tick(): Promise<Promise<SyncResult>[]> {
    const free = this.settings.concurrency - this.running.size;
    if (free <= 0) return [];
    const taken = await this.requests.take(free * 4);
    for (const request of taken) {
      const rows = (await connectorResources(this.sql, request.connectorId)).filter((r) => r.phase === 'live' && (request.resourceId === null || r.resource_id === request.resourceId));
      for (const row of rows) this.addPending({ orgId: row.org_id, connectorId: row.connector_id, resourceId: row.resource_id, trigger: triggerFor(row.state, true) });
    }
    const due = await dueResources(this.sql, this.clock(), free * 4 + this.running.size + this.pending.length);
    const candidates: Candidate[] = [...this.pending, ...due.map((row) => ({ orgId: row.org_id, connectorId: row.connector_id, resourceId: row.resource_id, trigger: triggerFor(row.state, false) }))];
    const started: Promise<SyncResult>[] = [];
    const busy = new Set([...this.running.values()].map((r) => r.connectorId));
    const leasedElsewhere = new Map<string, boolean>();
    const kept: Candidate[] = [];
    for (const c of candidates) {
      const key = `${c.connectorId}/${c.resourceId}`;
      const asked = this.pending.includes(c);
      if (this.running.has(key) || busy.has(c.connectorId) || this.running.size >= this.settings.concurrency) {
        if (asked) kept.push(c);
        continue;
      }
      // One sync per connector across processes too: another process's unexpired lease on a resource of this
      // connector waits its turn (best effort, from the read model; the lease on each resource stream is the rule).
      if (!leasedElsewhere.has(c.connectorId)) leasedElsewhere.set(c.connectorId, await this.leasedElsewhere(c.connectorId));
      if (leasedElsewhere.get(c.connectorId)) {
        if (asked) kept.push(c);
        continue;
      }
      busy.add(c.connectorId);
      started.push(this.launch(key, c));
    }
    this.pending = kept;
    return started;
  }

  private addPending(c: Candidate): void {
    if (!this.pending.some((p) => p.connectorId === c.connectorId && p.resourceId === c.resourceId)) this.pending.push(c);
  }

  private async leasedElsewhere(connectorId: string): Promise<boolean> {
    const now = this.clock().getTime();
    const rows: ConnectorResourceRow[] = await connectorResources(this.sql, connectorId);
    return rows.some((r) => r.phase === 'live' && r.running_sync_id !== null && r.lease_expires_at !== null && new Date(r.lease_expires_at).getTime() > now && !this.running.has(`${connectorId}/${r.resource_id}`));
  }

  private launch(key: string, c: Candidate): Promise<SyncResult> {
    const abort = new AbortController();
    const result = this.engine.run({ ...c, signal: abort.signal }).catch((err): SyncResult => {
      this.log.error({ err: err instanceof Error ? err.message : String(err), connectorId: c.connectorId, resourceId: c.resourceId }, 'connector sync stopped');
      return { kind: 'skipped', reason: err instanceof Error ? err.message : String(err) };
    });
    const done = result.then((r) => {
      this.running.delete(key);
      if (r.kind !== 'skipped') this.log.info({ connectorId: c.connectorId, resourceId: c.resourceId, trigger: c.trigger, result: r }, 'connector sync ended');
      if (!this.stopped) this.wake();
    });
    this.running.set(key, { connectorId: c.connectorId, abort, done });
    return result;
  }
}
