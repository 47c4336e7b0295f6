import type { DomainEvent } from '../domain-event';
import { DomainError } from '../errors';
import type { DeliveryAttempted, DeliveryEvent, DeliveryStatus } from './webhook.events';

/**
 * One delivery's own history (stream `delivery-<deliveryId>`). The record itself is created by the outbox
 * projection when an item reaches a terminal status, so a stream without events is a pending record.
 */
export interface DeliveryState {
  status: DeliveryStatus;
  attempts: number;
  roundAttempts: number;
}

/** What one send produced (the dispatcher measures it; the decider turns it into the record's next state). */
export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  durationMs: number;
  /** no use retrying on schedule (e.g. no webhook registered any more) */
  final?: boolean;
}

export interface RetryPolicy {
  /** delays after the 1st, 2nd, ... failed attempt of a round; attempts per round = schedule.length + 1 */
  scheduleMs: number[];
  /** relative jitter: each delay is scaled by a factor drawn uniformly from [1 - jitter, 1 + jitter] */
  jitter: number;
}

export type DeliveryCommand =
  | { type: 'RecordAttempt'; deliveryId: string; result: SendResult; now: Date; random: number; policy: RetryPolicy }
  | { type: 'RequestRetry'; deliveryId: string };

export const initialDelivery = (): DeliveryState => ({ status: 'pending', attempts: 0, roundAttempts: 0 });

/** Folds the stream; an event of another family leaves the state as it is. */
export function evolveDelivery(state: DeliveryState, event: DomainEvent): DeliveryState {
  switch (event.type) {
    case 'DeliveryAttempted':
      return { status: event.data.status, attempts: event.data.attempt, roundAttempts: event.data.roundAttempt };
    case 'DeliveryRetryRequested':
      return { ...state, status: 'pending', roundAttempts: 0 };
    default:
      // Every DeliveryEvent is handled above (this fails to compile when one is not).
      event satisfies Exclude<DomainEvent, DeliveryEvent>;
      return state;
  }
}

/** Delay before the next attempt after the n-th failed attempt of a round (1-based), jitter applied; null when retries are exhausted. */
export function nextDelayMs(policy: RetryPolicy, roundAttempt: number, random: number): number | null {
  if (roundAttempt > policy.scheduleMs.length) return null;
  const base = policy.scheduleMs[roundAttempt - 1];
  return Math.max(0, Math.round(base * (1 + policy.jitter * (2 * random - 1))));
}

export function decideDelivery(command: DeliveryCommand, state: DeliveryState): DeliveryEvent[] {
  switch (command.type) {
    case 'RecordAttempt': {
      const { result, policy } = command;
      const attempt = state.attempts + 1;
      const roundAttempt = state.roundAttempts + 1;
      let status: DeliveryAttempted['data']['status'];
      let nextAttemptAt: string | null = null;
      if (state.status === 'delivered' || result.ok) {
        status = 'delivered'; // a late duplicate attempt never undoes a delivery
      } else {
        const delay = result.final ? null : nextDelayMs(policy, roundAttempt, command.random);
        status = delay === null ? 'permanently_failed' : 'failed';
        if (delay !== null) nextAttemptAt = new Date(command.now.getTime() + delay).toISOString();
      }
      return [{
        type: 'DeliveryAttempted',
        data: {
          deliveryId: command.deliveryId, attempt, roundAttempt, ok: result.ok, statusCode: result.statusCode,
          errorCode: result.ok ? null : result.errorCode, errorMessage: result.ok ? null : result.errorMessage,
          durationMs: result.durationMs, status, nextAttemptAt,
        },
      }];
    }
    case 'RequestRetry':
      if (state.status !== 'failed' && state.status !== 'permanently_failed') {
        throw new DomainError('conflict', 'DELIVERY_NOT_RETRYABLE', `delivery ${command.deliveryId} is ${state.status}; only failed or permanently_failed deliveries can be retried`);
      }
      return [{ type: 'DeliveryRetryRequested', data: { deliveryId: command.deliveryId, previousStatus: state.status } }];
    default: {
      const never: never = command;
      return never;
    }
  }
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a schedule like `5s,5m,30m,2h,5h,10h,10h` (plain numbers are milliseconds). */
export function parseRetrySchedule(text: string): number[] {
  const out = text.split(',').map((part) => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(part);
    if (!m) throw new Error(`invalid retry schedule entry '${part}' (use e.g. 5s,5m,30m,2h)`);
    return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']);
  });
  return out;
}
