import { deciderSpec } from '@crs/test/support/decider-spec';
import { decideDelivery, evolveDelivery, initialDelivery, nextDelayMs, parseRetrySchedule, type RetryPolicy, type SendResult } from './delivery.decider';
import type { DeliveryAttempted, DeliveryEvent } from './webhook.events';

const given = deciderSpec({ decide: decideDelivery, evolve: evolveDelivery, initialState: initialDelivery });

const policy: RetryPolicy = { scheduleMs: [1000, 2000], jitter: 0.2 };
const now = new Date('2026-01-01T00:00:00.000Z');
const failure: SendResult = { ok: false, statusCode: 500, errorCode: 'HTTP_500', errorMessage: 'boom', durationMs: 3 };
const success: SendResult = { ok: true, statusCode: 200, errorCode: null, errorMessage: null, durationMs: 2 };

const send = (result: SendResult, random = 0.5) => ({ type: 'RecordAttempt' as const, deliveryId: 'd', result, now, random, policy });
const retry = { type: 'RequestRetry' as const, deliveryId: 'd' };

/** The DeliveryAttempted of one send. */
function attempted(
  attempt: number,
  roundAttempt: number,
  result: SendResult,
  status: DeliveryAttempted['data']['status'],
  nextAttemptAt: string | null = null,
): DeliveryEvent {
  return {
    type: 'DeliveryAttempted',
    data: {
      deliveryId: 'd', attempt, roundAttempt, ok: result.ok, statusCode: result.statusCode,
      errorCode: result.ok ? null : result.errorCode, errorMessage: result.ok ? null : result.errorMessage,
      durationMs: result.durationMs, status, nextAttemptAt,
    },
  };
}
const retried = (previousStatus: 'failed' | 'permanently_failed'): DeliveryEvent => ({ type: 'DeliveryRetryRequested', data: { deliveryId: 'd', previousStatus } });

describe('delivery decider', () => {
  describe('RecordAttempt', () => {
    it('a success delivers the record, and records no error', () => {
      given([]).when(send({ ...success, errorCode: 'X', errorMessage: 'ignored' })).then([attempted(1, 1, success, 'delivered')]);
    });

    it('a failure is retried on the schedule, its jitter decided now and recorded in the event', () => {
      given([]).when(send(failure, 1)).then([attempted(1, 1, failure, 'failed', '2026-01-01T00:00:01.200Z')]);
      given([attempted(1, 1, failure, 'failed', 'x')]).when(send(failure, 0)).then([attempted(2, 2, failure, 'failed', '2026-01-01T00:00:01.600Z')]);
    });

    it('a failure after the last scheduled attempt fails permanently', () => {
      given([attempted(1, 1, failure, 'failed', 'x'), attempted(2, 2, failure, 'failed', 'y')])
        .when(send(failure))
        .then([attempted(3, 3, failure, 'permanently_failed')]);
    });

    it('a final failure skips the schedule', () => {
      const final = { ...failure, final: true };
      given([]).when(send(final)).then([attempted(1, 1, final, 'permanently_failed')]);
    });

    it('a late failed duplicate never undoes a delivery', () => {
      given([attempted(1, 1, success, 'delivered')]).when(send(failure)).then([attempted(2, 2, failure, 'delivered')]);
    });
  });

  describe('RequestRetry', () => {
    it('retries a failed or permanently failed delivery', () => {
      given([attempted(1, 1, failure, 'failed', 'x')]).when(retry).then([retried('failed')]);
      given([attempted(1, 1, { ...failure, final: true }, 'permanently_failed')]).when(retry).then([retried('permanently_failed')]);
    });

    it('refuses a pending or delivered delivery', () => {
      given([]).when(retry).thenThrows('DELIVERY_NOT_RETRYABLE', 'conflict');
      given([attempted(1, 1, success, 'delivered')]).when(retry).thenThrows('DELIVERY_NOT_RETRYABLE');
      given([attempted(1, 1, failure, 'failed', 'x'), retried('failed')]).when(retry).thenThrows('DELIVERY_NOT_RETRYABLE');
    });

    it('a retried delivery starts a fresh schedule, and keeps counting its attempts', () => {
      const exhausted = [attempted(1, 1, failure, 'failed', 'x'), attempted(2, 2, failure, 'failed', 'y'), attempted(3, 3, failure, 'permanently_failed')];
      given([...exhausted, retried('permanently_failed')]).when(send(failure, 1)).then([attempted(4, 1, failure, 'failed', '2026-01-01T00:00:01.200Z')]);
    });
  });
});

describe('retry schedule', () => {
  it('parses schedules in ms, s, m and h (plain numbers are milliseconds)', () => {
    expect(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h')).toEqual([5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000]);
    expect(parseRetrySchedule('50,100ms')).toEqual([50, 100]);
    expect(() => parseRetrySchedule('soon')).toThrow();
  });

  it('delays stay within the jitter bounds; none once the schedule is exhausted', () => {
    for (const r of [0, 0.3, 0.999]) {
      const d = nextDelayMs({ scheduleMs: [1000], jitter: 0.2 }, 1, r)!;
      expect(d).toBeGreaterThanOrEqual(800);
      expect(d).toBeLessThanOrEqual(1200);
    }
    expect(nextDelayMs({ scheduleMs: [1000], jitter: 0.2 }, 2, 0.5)).toBeNull();
  });
});
