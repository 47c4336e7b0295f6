import { ClaimLoop } from '@crs/persistence/claim-loop';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { EventStore } from '@crs/eventstore/event-store.port';
import { handleCommand } from '@crs/eventstore/command-handling';
import { streams } from '@crs/domain/streams';
import {
  decideDelivery,
  evolveDelivery,
  initialDelivery,
  type DeliveryCommand,
  type DeliveryState,
  type RetryPolicy,
  type SendResult,
} from '@crs/domain/webhooks/delivery.decider';
import type { DeliveryEvent } from '@crs/domain/webhooks/webhook.events';
import type { ProjectionRunner, RunnerLogger } from '@crs/persistence/projection-runner';
import type { SigningSecretVault } from './signing-secret-vault';
import type { WebhookSender } from './webhook-sender';
import { deliveryHeaders } from './webhook-signing';
import { claimDueDeliveries, findDeliveryTarget, findDeliveryToSend, type DeliveryToSendRow } from '@crs/projections/webhook-outbox/webhook-outbox.queries';

/**
 * Leases of the dispatcher (`sweeping`): state of the sender, not of the log, so they live outside the
 * outbox projection and a rebuild never touches them. A lease that outlives its holder expires and the
 * record is claimed again (a dispatcher that died mid-delivery).
 */
export const DELIVERY_LEASES_DDL = `CREATE TABLE IF NOT EXISTS webhook_delivery_leases (
  delivery_id text PRIMARY KEY,
  owner text NOT NULL,
  lease_until timestamptz NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now()
)`;

export interface DispatcherOptions extends RetryPolicy {
  /** deliveries sent at once by one dispatcher */
  concurrency: number;
  /** a claim expires after this long; must exceed timeoutMs plus the time to record the attempt */
  leaseMs: number;
  /** idle poll interval */
  pollMs: number;
  /** receiver response time-out */
  timeoutMs: number;
}

/**
 * The outbox's sender. Claims due records (pending, or failed whose next attempt is due) with a lease,
 * reads the organization's current registration and signing secret at send time (so a new secret takes
 * effect for deliveries in flight), sends with a time-out, and appends DeliveryAttempted for every attempt
 * on the delivery's own stream (decided on that stream's state, so the record's next state, including the
 * jittered next attempt time, is fixed in the event). The outbox projection moves the record; the lease is
 * released once it has. At-least-once: receivers deduplicate on delivery_id.
 */
export class WebhookDispatcher {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  /** set by abandon(): behave like a process that died (record nothing, release nothing) */
  private dead = false;
  private readonly loop: ClaimLoop<string>;
  private readonly inFlight = new Set<AbortController>();

  constructor(
    private readonly ds: DataSource,
    private readonly store: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly vault: SigningSecretVault,
    private readonly sender: WebhookSender,
    private readonly log: RunnerLogger,
    readonly options: DispatcherOptions,
  ) {
    this.loop = new ClaimLoop<string>({
      concurrency: options.concurrency,
      pollMs: options.pollMs,
      claim: (n) => this.claim(n),
      work: (id) => this.deliver(id),
      onError: (err, phase, id) =>
        this.log.error(
          { delivery: id, err: (err as Error).message },
          phase === 'work' ? 'webhook delivery failed unexpectedly; its lease will expire and it will be retried' : 'webhook claim failed',
        ),
    });
  }

  static async migrate(ds: DataSource): Promise<void> {
    await ds.query(DELIVERY_LEASES_DDL);
  }

  start(): void {
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  /** Stops claiming and waits for deliveries in flight to be recorded. */
  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /**
   * Simulates the death of this dispatcher (tests): connections in flight are cut, nothing is recorded
   * and leases stay until they expire, exactly as after a crash.
   */
  async abandon(): Promise<void> {
    this.dead = true;
    for (const c of this.inFlight) c.abort();
    await this.stop();
  }

  /** Claims up to `n` due records whose lease is free or expired (INSERT ... ON CONFLICT: dispatchers compete safely). */
  async claim(n: number): Promise<string[]> {
    return claimDueDeliveries(this.ds, this.owner, this.options.leaseMs, n);
  }

  private async deliver(deliveryId: string): Promise<void> {
    const record = await findDeliveryToSend(this.ds, deliveryId);
    if (!record || !['pending', 'failed'].includes(record.status)) return this.release(deliveryId);
    const result = await this.send(record);
    if (this.dead) return;
    const now = new Date(); // one clock reading: the event's time and the base of its next attempt time
    const out = await handleCommand<DeliveryState, DeliveryEvent, DeliveryCommand>(
      this.store,
      streams.webhookDelivery(deliveryId),
      { initial: initialDelivery, evolve: evolveDelivery },
      decideDelivery,
      { type: 'RecordAttempt', deliveryId, result, now, random: Math.random(), policy: this.options },
      { orgId: record.org_id, actor: 'system:webhook-dispatcher', databaseId: record.database_id, now },
    );
    // Release only once the record shows the attempt; otherwise the lease expires and nothing is sent twice meanwhile.
    if (out.position !== null && (await this.runner.waitFor(out.position, ['webhook-outbox'], Math.max(1000, this.options.leaseMs / 2)))) {
      await this.release(deliveryId);
    }
  }

  /** One attempt to the organization's current registration, signed with its current secret. */
  private async send(record: DeliveryToSendRow): Promise<SendResult> {
    const hook = await findDeliveryTarget(this.ds, record.org_id);
    if (!hook) {
      return { ok: false, statusCode: null, errorCode: 'WEBHOOK_NOT_REGISTERED', errorMessage: 'the organization has no indexing webhook registered any more', durationMs: 0, final: true };
    }
    let secret: string | null = null;
    if (hook.secret_id) {
      try {
        secret = await this.vault.get(record.org_id, hook.secret_id);
      } catch (err) {
        this.log.error({ org: record.org_id, err: (err as Error).message }, 'webhook signing secret unavailable');
      }
      if (secret === null) {
        // Never send unsigned while signing is configured.
        return { ok: false, statusCode: null, errorCode: 'SIGNING_SECRET_UNAVAILABLE', errorMessage: 'the signing secret could not be read (see the worker log)', durationMs: 0 };
      }
    }
    const body = Buffer.from(record.payload, 'utf8');
    const headers = deliveryHeaders({ deliveryId: record.delivery_id, eventType: record.event_type, body, secret, now: new Date() });
    const abort = new AbortController();
    this.inFlight.add(abort);
    try {
      return await this.sender.send({ url: hook.url, body, headers, timeoutMs: this.options.timeoutMs, signal: abort.signal });
    } finally {
      this.inFlight.delete(abort);
    }
  }

  private async release(deliveryId: string): Promise<void> {
    await this.ds.query('DELETE FROM webhook_delivery_leases WHERE delivery_id = $1 AND owner = $2', [deliveryId, this.owner]);
  }
}
