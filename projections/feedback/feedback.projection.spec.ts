import { createTestDatabase } from '@crs/test/support/test-database';
import { expectIdempotent } from '@crs/test/support/projection-spec';
import { recorded } from '@crs/test/support/projection-spec';
import { feedbackProjection } from './feedback.projection';

describe('feedback projection', () => {
  let url: string;
  beforeAll(async () => {
    url = await createTestDatabase('fbproj');
  });

  const db = '11111111-1111-4111-8111-111111111111';
  const rid = '22222222-2222-4222-8222-222222222222';
  const fb = (n: number, extra: Record<string, unknown> = {}) =>
    recorded('FeedbackRecorded', {
      feedbackId: `33333333-3333-4333-8333-00000000000${n}`, requestId: rid, databaseId: db, databaseName: 'acme', collection: null,
      feedback: `comment ${n}`, rating: null, source: 'user', groundTruth: { answer: null, sourceIds: ['a', 'b'] }, metadata: { k: 'v' },
      linked: true, queryDatabaseId: db, ...extra,
    });

  it('stores every submission separately, times from the event (each event delivered twice)', async () => {
    const rows = await expectIdempotent(url, feedbackProjection, [fb(1), fb(2, { rating: 'negative', linked: false, queryDatabaseId: null })]);
    expect(rows.rm_feedback).toHaveLength(2);
    expect(rows.rm_feedback[0]).toContain('comment 1');
    expect(rows.rm_feedback[0]).toContain('2026-01-01 00:00:00+00');
    expect(rows.rm_feedback[1]).toContain('negative');
  });

  it('forgets a deleted database\'s feedback, and a deleted collection\'s', async () => {
    const other = '44444444-4444-4444-8444-444444444444';
    const rows = await expectIdempotent(url, feedbackProjection, [
      fb(1),
      fb(2, { databaseId: null, databaseName: null }),
      fb(3, { databaseId: other, queryDatabaseId: other, collection: 'c1' }),
      fb(4, { databaseId: other, queryDatabaseId: other, collection: 'c2' }),
      recorded('DatabaseDeleted', { databaseId: db, name: 'acme', requestedBy: 'x', requestedAt: 'y', streamsDeleted: 1, itemsDeleted: 0 }),
      recorded('CollectionDeleted', { databaseId: other, collection: 'c1', requestedBy: 'x', requestedAt: 'y', itemsDeleted: 0 }),
    ]);
    expect(rows.rm_feedback).toHaveLength(1);
    expect(rows.rm_feedback[0]).toContain('comment 4');
  });
});
