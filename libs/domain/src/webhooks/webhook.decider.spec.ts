import { decideWebhook, evolveWebhook, initialWebhook } from './webhook.decider';
import { decideDelivery, evolveDelivery, initialDelivery, nextDelayMs, parseRetrySchedule, type RetryPolicy } from './delivery.decider';
import type { DeliveryEvent, WebhookEvent } from './webhook.events';
import { statusChangedPayload, testPayload } from './webhook-payload';

const given = (events: WebhookEvent[]) => events.reduce(evolveWebhook, initialWebhook());
const registered: WebhookEvent = { type: 'WebhookRegistered', data: { url: 'https://a.example/h', eventTypes: ['indexing.status_changed'], replaced: false } };

describe('webhook registration decider', () => {
  it('registers, and registering again replaces without touching the secret', () => {
    expect(decideWebhook({ type: 'Register', url: 'https://a.example/h', eventTypes: ['indexing.status_changed'] }, given([]))).toEqual([registered]);
    const withSecret = given([registered, { type: 'SigningSecretSet', data: { secretId: 's1', generated: true } }]);
    const again = decideWebhook({ type: 'Register', url: 'https://b.example/h', eventTypes: [] }, withSecret);
    expect(again).toEqual([{ type: 'WebhookRegistered', data: { url: 'https://b.example/h', eventTypes: [], replaced: true } }]);
    expect(again.reduce(evolveWebhook, withSecret).secretId).toBe('s1');
  });

  it('sets and removes secrets only on a registration; deleting forgets the secret', () => {
    expect(() => decideWebhook({ type: 'SetSecret', secretId: 's', generated: false }, given([]))).toThrow(expect.objectContaining({ code: 'WEBHOOK_NOT_REGISTERED' }));
    const s = given([registered, { type: 'SigningSecretSet', data: { secretId: 's1', generated: false } }]);
    expect(decideWebhook({ type: 'RemoveSecret' }, s)).toEqual([{ type: 'SigningSecretRemoved', data: { secretId: 's1' } }]);
    expect(decideWebhook({ type: 'RemoveSecret' }, given([registered]))).toEqual([]);
    const deleted = given([registered, { type: 'SigningSecretSet', data: { secretId: 's1', generated: false } }, { type: 'WebhookDeleted', data: { url: 'x' } }]);
    expect(deleted).toEqual(initialWebhook());
    expect(decideWebhook({ type: 'Delete' }, deleted)).toEqual([]);
  });
});

describe('delivery decider', () => {
  const policy: RetryPolicy = { scheduleMs: [1000, 2000], jitter: 0.2 };
  const now = new Date('2026-01-01T00:00:00.000Z');
  const fail = { ok: false, statusCode: 500, errorCode: 'HTTP_500', errorMessage: 'boom', durationMs: 3 };
  const attempt = (state: ReturnType<typeof initialDelivery>, ok = false, random = 0.5) => {
    const [e] = decideDelivery({ type: 'RecordAttempt', deliveryId: 'd', result: ok ? { ...fail, ok: true, statusCode: 200 } : fail, now, random, policy }, state);
    return e as DeliveryEvent & { type: 'DeliveryAttempted' };
  };

  it('fails on schedule (jitter decided now, recorded in the event), then permanently fails', () => {
    const a1 = attempt(initialDelivery(), false, 1);
    expect(a1.data).toMatchObject({ attempt: 1, roundAttempt: 1, status: 'failed', nextAttemptAt: '2026-01-01T00:00:01.200Z', errorCode: 'HTTP_500' });
    const s1 = evolveDelivery(initialDelivery(), a1);
    const a2 = attempt(s1, false, 0);
    expect(a2.data).toMatchObject({ attempt: 2, status: 'failed', nextAttemptAt: '2026-01-01T00:00:01.600Z' });
    const a3 = attempt(evolveDelivery(s1, a2));
    expect(a3.data).toMatchObject({ attempt: 3, status: 'permanently_failed', nextAttemptAt: null });
  });

  it('delivers, and a late failed duplicate never undoes it', () => {
    const d = evolveDelivery(initialDelivery(), attempt(initialDelivery(), true));
    expect(d.status).toBe('delivered');
    expect(attempt(d).data).toMatchObject({ attempt: 2, status: 'delivered', ok: false });
  });

  it('retries manually only from failed or permanently_failed, with a fresh schedule', () => {
    expect(() => decideDelivery({ type: 'RequestRetry', deliveryId: 'd' }, initialDelivery())).toThrow(expect.objectContaining({ code: 'DELIVERY_NOT_RETRYABLE' }));
    const failed = evolveDelivery(initialDelivery(), attempt(initialDelivery()));
    const [retry] = decideDelivery({ type: 'RequestRetry', deliveryId: 'd' }, failed);
    const s = evolveDelivery(failed, retry);
    expect(s).toEqual({ status: 'pending', attempts: 1, roundAttempts: 0 });
    expect(attempt(s).data).toMatchObject({ attempt: 2, roundAttempt: 1, status: 'failed' });
    const delivered = evolveDelivery(initialDelivery(), attempt(initialDelivery(), true));
    expect(() => decideDelivery({ type: 'RequestRetry', deliveryId: 'd' }, delivered)).toThrow(expect.objectContaining({ code: 'DELIVERY_NOT_RETRYABLE' }));
  });

  it('a final failure skips the schedule', () => {
    const [e] = decideDelivery({ type: 'RecordAttempt', deliveryId: 'd', result: { ...fail, final: true }, now, random: 0.5, policy }, initialDelivery());
    expect(e.data).toMatchObject({ status: 'permanently_failed' });
  });

  it('parses schedules; delays stay within the jitter bounds', () => {
    expect(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h')).toEqual([5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000]);
    expect(parseRetrySchedule('50,100ms')).toEqual([50, 100]);
    expect(() => parseRetrySchedule('soon')).toThrow();
    for (const r of [0, 0.3, 0.999]) {
      const d = nextDelayMs({ scheduleMs: [1000], jitter: 0.2 }, 1, r)!;
      expect(d).toBeGreaterThanOrEqual(800);
      expect(d).toBeLessThanOrEqual(1200);
    }
    expect(nextDelayMs({ scheduleMs: [1000], jitter: 0.2 }, 2, 0.5)).toBeNull();
  });
});

describe('webhook payloads', () => {
  it('has the spec fields; error fields only for failures; tenant_id is the database id', () => {
    const p = statusChangedPayload({ deliveryId: 'dlv_1', itemId: 'm1', databaseName: 'acme', databaseId: 'uuid-1', collection: 'c', status: 'errored', timestamp: 't', errorCode: 'PARSE_FAILED', errorMessage: 'bad' });
    expect(Object.keys(p)).toEqual(['event', 'delivery_id', 'id', 'database', 'collection', 'status', 'timestamp', 'error_code', 'error_message', 'tenant_id', 'sub_tenant_id']);
    expect(p).toMatchObject({ tenant_id: 'uuid-1', sub_tenant_id: 'c', database: 'acme' });
    const ok = statusChangedPayload({ deliveryId: 'dlv_1', itemId: 'm1', databaseName: 'acme', databaseId: 'uuid-1', collection: 'c', status: 'completed', timestamp: 't', errorCode: 'X' });
    expect(ok).not.toHaveProperty('error_code');
    expect(testPayload('org', 'test_1', 't')).toMatchObject({ id: 'test_document', database: 'org', collection: 'org', tenant_id: 'org', sub_tenant_id: 'org', status: 'completed', test: true });
  });
});
