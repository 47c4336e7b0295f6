import { createTestDatabase } from '@crs/test/support/test-database';
import { expectIdempotent, recorded } from '@crs/test/support/projection-spec';
import { webhookOutboxProjection } from './webhook-outbox.projection';

describe('webhook outbox projection', () => {
  let url: string;
  beforeAll(async () => {
    url = await createTestDatabase('outboxproj');
  });

  const db = '11111111-1111-4111-8111-111111111111';
  const created = () => recorded('DatabaseCreated', { databaseId: db, name: 'acme', metadataSchema: [], embedder: { modelId: 'm', dimensions: 3 } });
  const registered = (eventTypes = ['indexing.status_changed']) => recorded('WebhookRegistered', { url: 'https://hooks.example/x', eventTypes, replaced: false });
  const status = (itemId: string, s: string, extra: Record<string, unknown> = {}) =>
    recorded('StatusAdvanced', { databaseId: db, itemKey: `k-${itemId}`, itemId, collection: 'default', store: 'memory', contentVersion: 0, status: s, ...extra });

  it('turns terminal statuses into pending records only while a registration subscribes (each event delivered twice)', async () => {
    const before = status('m0', 'completed');
    const done = status('m1', 'completed');
    const errored = status('m2', 'errored', { errorCode: 'PARSE_FAILED', message: 'bad pdf' });
    const rows = await expectIdempotent(url, webhookOutboxProjection, [
      created(),
      before, // no registration yet: never delivered
      registered(),
      status('m1', 'processing'),
      done,
      errored,
      status('m1::inferred:0', 'completed', { derived: true }), // a derived memory: not an item the client ingested
      recorded('WebhookRegistered', { url: 'https://hooks.example/x', eventTypes: [], replaced: true }),
      status('m3', 'completed'), // registration no longer subscribes
    ]);
    expect(rows.rm_webhook_deliveries).toHaveLength(2);
    expect(rows.rm_webhook_deliveries.join('\n')).not.toContain('inferred');
    const all = rows.rm_webhook_deliveries.join('\n');
    expect(all).toContain(`dlv_${done.metadata.eventId}`);
    expect(all).toContain(`dlv_${errored.metadata.eventId}`);
    expect(all).not.toContain(`dlv_${before.metadata.eventId}`);
    expect(all).toContain('PARSE_FAILED');
    expect(rows.rm_webhook_deliveries.every((r) => r.includes(',pending,'))).toBe(true);
  });

  it('follows attempts and manual retries from the events alone', async () => {
    const done = status('m1', 'completed');
    const id = `dlv_${done.metadata.eventId}`;
    const attempt = (n: number, s: string, next: string | null) =>
      recorded('DeliveryAttempted', { deliveryId: id, attempt: n, roundAttempt: n, ok: s === 'delivered', statusCode: s === 'delivered' ? 200 : 500, errorCode: s === 'delivered' ? null : 'HTTP_500', errorMessage: null, durationMs: 4, status: s, nextAttemptAt: next }, { occurredAt: `2026-01-01T00:00:0${n}.000Z` });
    const rows = await expectIdempotent(url, webhookOutboxProjection, [
      created(), registered(), done,
      attempt(1, 'failed', '2026-01-01T00:00:05.000Z'),
      attempt(2, 'permanently_failed', null),
      recorded('DeliveryRetryRequested', { deliveryId: id, previousStatus: 'permanently_failed' }, { occurredAt: '2026-01-01T00:00:07.000Z' }),
      recorded('DeliveryAttempted', { deliveryId: id, attempt: 3, roundAttempt: 1, ok: true, statusCode: 200, errorCode: null, errorMessage: null, durationMs: 2, status: 'delivered', nextAttemptAt: null }, { occurredAt: '2026-01-01T00:00:08.000Z' }),
    ]);
    expect(rows.rm_webhook_deliveries).toHaveLength(1);
    expect(rows.rm_webhook_deliveries[0]).toMatch(/,delivered,3,1,200,,,,/);
  });

  it('a deleted item takes its records along (its id in its collection), and only those', async () => {
    const deleted = (itemId: string, collection = 'default') => recorded('ItemDeleted', { databaseId: db, itemKey: `k-${itemId}`, itemId, collection, store: 'memory' });
    const rows = await expectIdempotent(url, webhookOutboxProjection, [
      created(), registered(),
      status('m1', 'completed'),
      status('m2', 'completed'),
      status('m3', 'completed', { collection: 'other' }),
      deleted('m1'),
      deleted('m3'), // m3 of the default collection: none, the one of `other` stays
    ]);
    expect(rows.rm_webhook_deliveries.map((r) => r.split(',')[4])).toEqual(expect.arrayContaining(['m2', 'm3']));
    expect(rows.rm_webhook_deliveries).toHaveLength(2);
    // Re-ingested after its deletion: the new terminal status is delivered again.
    const again = await expectIdempotent(url, webhookOutboxProjection, [created(), registered(), status('m1', 'completed'), deleted('m1'), status('m1', 'completed')]);
    expect(again.rm_webhook_deliveries).toHaveLength(1);
  });

  it('registration, secret id and deletion; a deleted database takes its records along', async () => {
    const rows = await expectIdempotent(url, webhookOutboxProjection, [
      created(), registered(),
      recorded('SigningSecretSet', { secretId: '55555555-5555-4555-8555-555555555555', generated: true }),
      status('m1', 'completed'),
      recorded('DatabaseDeleted', { databaseId: db, name: 'acme', requestedBy: 'x', requestedAt: 'y', streamsDeleted: 1, itemsDeleted: 1 }),
    ]);
    expect(rows.rm_webhook_deliveries).toEqual([]);
    expect(rows.rm_webhook_databases).toEqual([]);
    expect(rows.rm_webhooks[0]).toContain('55555555-5555-4555-8555-555555555555');
    const gone = await expectIdempotent(url, webhookOutboxProjection, [registered(), recorded('WebhookDeleted', { url: 'https://hooks.example/x' })]);
    expect(gone.rm_webhooks).toEqual([]);
  });
});
