import { runCli } from '@crs/cli/cli';
import { verifyProjection } from '@crs/persistence/projection-verifier';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, waitForStatus } from '../support/ingest';

const UNKNOWN = '0b6f2a8e-5d1c-4f3a-9e7b-2c4d6e8f0a1b';

async function crs(t: TestApp, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l), env: { DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.config.dataDir }, progress: false });
  return { code, out, err };
}

describe('POST /feedback', () => {
  let t: TestApp;
  let requestId: string;
  let otherRequestId: string;
  const feedbackEvents = async () => (await t.store.readAll()).filter((e) => e.type === 'FeedbackRecorded');
  const rows = async () => t.ds.query('SELECT * FROM rm_feedback ORDER BY position');

  beforeAll(async () => {
    t = await startTestApp('feedback');
    await t.createDatabase('fbdb');
    await t.createDatabase('fbother');
    await ingestMemories(t, 'fbdb', [
      { id: 'kestrel', text: 'The kestrel hovers over the meadow hunting voles at dawn.' },
      { id: 'teapot', text: 'Alice keeps a blue teapot for her green tea every morning.' },
      { id: 'rocket', text: 'The rocket engine test fired for ninety seconds on the stand.' },
    ]);
    await waitForStatus(t, 'fbdb', ['kestrel', 'teapot', 'rocket']);
    const q = await t.request('POST', '/query', { body: { database: 'fbdb', query: 'kestrel hunting voles', type: 'memory' } });
    expect(q.status).toBe(200);
    requestId = q.body.meta.request_id;
    expect(q.body.data.chunks[0].id).toBe('kestrel');
    const q2 = await t.request('POST', '/query', { body: { database: 'fbdb', query: 'green tea teapot', type: 'memory' } });
    otherRequestId = q2.body.meta.request_id;
  });
  afterAll(async () => {
    await t.close();
  });

  it('records a submission linked to the query: 201, the envelope and the feedback response', async () => {
    const res = await t.request('POST', '/feedback', {
      body: { request_id: requestId, feedback: 'Exactly the bird I meant', rating: 'positive', database: 'fbdb', ground_truth: { answer: 'voles', source_ids: ['kestrel', 'kestrel', ' '] }, metadata: { app: 'web' } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ success: true, error: null, meta: { request_id: res.headers['x-request-id'], api_version: '2.0.1', database: 'fbdb' } });
    expect(res.body.data).toEqual({
      feedback_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      request_id: requestId,
      recorded: true,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      message: expect.stringContaining(requestId),
      linked: true,
    });
    expect(res.body.meta.deprecation).toBeUndefined();
    const [row] = (await rows()).filter((r: any) => r.feedback_id === res.body.data.feedback_id);
    expect(row).toMatchObject({ request_id: requestId, linked: true, rating: 'positive', source: 'user', ground_truth_source_ids: ['kestrel'], ground_truth_answer: 'voles', metadata: { app: 'web' }, database_name: 'fbdb' });
    expect(new Date(row.created_at).toISOString()).toBe(res.body.data.created_at);
  });

  it('stores every submission separately: a later one never replaces an earlier one; omitted rating is null, not neutral', async () => {
    const a = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'first thought' } });
    const b = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'second thought', rating: 'neutral', source: 'agent' } });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.data.feedback_id).not.toBe(b.body.data.feedback_id);
    const mine = (await rows()).filter((r: any) => [a.body.data.feedback_id, b.body.data.feedback_id].includes(r.feedback_id));
    expect(mine.map((r: any) => [r.feedback, r.rating, r.source, r.linked])).toEqual([
      ['first thought', null, 'user', true],
      ['second thought', 'neutral', 'agent', true],
    ]);
  });

  it('an unknown request id is still recorded, unlinked, with a message saying the query is unknown', async () => {
    const res = await t.request('POST', '/feedback', { body: { request_id: UNKNOWN, feedback: 'no idea which query' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ recorded: true, linked: false, request_id: UNKNOWN });
    expect(res.body.data.message).toMatch(/no query with request_id .* is known/);
    const [row] = (await rows()).filter((r: any) => r.feedback_id === res.body.data.feedback_id);
    expect(row.linked).toBe(false);
    // the request id of a query on another database than the one named: recorded, unlinked
    const other = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'wrong db', database: 'fbother' } });
    expect(other.body.data).toMatchObject({ linked: false });
    expect(other.body.data.message).toMatch(/another database/);
    // accepted as sent: an upper-case UUID is the same request id
    const upper = await t.request('POST', '/feedback', { body: { request_id: requestId.toUpperCase(), feedback: 'upper' } });
    expect(upper.body.data).toMatchObject({ request_id: requestId, linked: true });
  });

  it.each([
    ['missing request_id', { feedback: 'x' }, 'INVALID_INPUT', /request_id is required/],
    ['request_id not a UUID', { request_id: 'req-123', feedback: 'x' }, 'INVALID_INPUT', /request_id must be a UUID/],
    ['no signal at all', { request_id: UNKNOWN }, 'FEEDBACK_EMPTY', /no usable signal/],
    ['blank feedback, no ground truth', { request_id: UNKNOWN, feedback: '  \n ' }, 'FEEDBACK_EMPTY', /no usable signal/],
    ['blank feedback, empty ground truth', { request_id: UNKNOWN, feedback: '', ground_truth: {} }, 'FEEDBACK_EMPTY', /no usable signal/],
    ['blank ground-truth values', { request_id: UNKNOWN, ground_truth: { answer: ' ', source_ids: ['', '  '] } }, 'FEEDBACK_EMPTY', /no usable signal/],
    ['feedback over 8000', { request_id: UNKNOWN, feedback: 'x'.repeat(8001) }, 'FEEDBACK_TOO_LONG', /feedback is longer than 8000/],
    ['answer over 8000', { request_id: UNKNOWN, ground_truth: { answer: 'x'.repeat(8001) } }, 'FEEDBACK_TOO_LONG', /ground_truth.answer/],
    ['101 source ids', { request_id: UNKNOWN, ground_truth: { source_ids: Array.from({ length: 101 }, (_, i) => `s${i}`) } }, 'TOO_MANY_SOURCE_IDS', /at most 100/],
    ['a source id over 256', { request_id: UNKNOWN, ground_truth: { source_ids: ['s'.repeat(257)] } }, 'SOURCE_ID_TOO_LONG', /256/],
    ['unknown rating', { request_id: UNKNOWN, feedback: 'x', rating: 'thumbs_up' }, 'INVALID_RATING', /positive, negative, neutral/],
    ['unknown source', { request_id: UNKNOWN, feedback: 'x', source: 'robot' }, 'INVALID_SOURCE', /user, agent/],
    ['collection without database', { request_id: UNKNOWN, feedback: 'x', collection: 'c1' }, 'INVALID_INPUT', /collection requires database/],
    ['21 metadata entries', { request_id: UNKNOWN, feedback: 'x', metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, 'METADATA_TOO_LARGE', /20/],
    ['metadata key over 64', { request_id: UNKNOWN, feedback: 'x', metadata: { ['k'.repeat(65)]: 'v' } }, 'METADATA_TOO_LARGE', /64/],
    ['metadata value over 512', { request_id: UNKNOWN, feedback: 'x', metadata: { k: 'v'.repeat(513) } }, 'METADATA_TOO_LARGE', /512/],
    ['metadata value not a string', { request_id: UNKNOWN, feedback: 'x', metadata: { k: 3 } }, 'INVALID_INPUT', /metadata.k/],
    ['unknown field', { request_id: UNKNOWN, feedback: 'x', score: 5 }, 'INVALID_INPUT', /score/],
  ])('400 for %s, nothing recorded', async (_name, body, code, message) => {
    const before = (await feedbackEvents()).length;
    const res = await t.request('POST', '/feedback', { body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, data: null, error: { code } });
    expect(res.body.error.message).toMatch(message);
    expect((await feedbackEvents()).length).toBe(before);
  });

  it('a bodyless POST without Content-Type is a 400 naming request_id', async () => {
    const res = await t.request('POST', '/feedback');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(res.body.error.message).toMatch(/request_id/);
  });

  it('accepts the limits exactly, collapses duplicate source ids and drops blank ones', async () => {
    const res = await t.request('POST', '/feedback', {
      body: {
        request_id: UNKNOWN,
        ground_truth: { answer: 'a'.repeat(8000), source_ids: [...Array.from({ length: 100 }, (_, i) => `id-${i}`.padEnd(256, 'x')), 'id-0'.padEnd(256, 'x'), ''] },
        metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(512)])),
        feedback: 'f'.repeat(8000),
      },
    });
    expect(res.status).toBe(201);
    const [row] = (await rows()).filter((r: any) => r.feedback_id === res.body.data.feedback_id);
    expect(row.ground_truth_source_ids).toHaveLength(100);
    expect(row.rating).toBeNull();
    // a ground truth alone (no feedback) is a usable signal
    const gtOnly = await t.request('POST', '/feedback', { body: { request_id: requestId, ground_truth: { source_ids: ['kestrel'] } } });
    expect(gtOnly.status).toBe(201);
  });

  it('deprecated tenant_id / sub_tenant_id work with notices; validation failures with them carry detail', async () => {
    const ok = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'legacy client', tenant_id: 'fbdb', sub_tenant_id: 'default' } });
    expect(ok.status).toBe(201);
    expect(ok.body.meta).toMatchObject({ tenant_id: 'fbdb', sub_tenant_id: 'default', database: 'fbdb', collection: 'default' });
    expect(ok.body.meta.deprecation.map((d: any) => d.deprecated_field).sort()).toEqual(['sub_tenant_id', 'tenant_id']);
    expect(ok.body.meta.deprecation[0]).toEqual({ deprecated: true, deprecated_field: expect.any(String), deprecated_since: '2.0.1', message: expect.any(String), preferred_field: expect.any(String) });

    const orphan = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'x', sub_tenant_id: 'c1' } });
    expect(orphan.status).toBe(400);
    expect(orphan.body.error.message).toMatch(/sub_tenant_id requires database \(or tenant_id\)/);
    expect(orphan.body.detail).toMatchObject({ error_code: 'INVALID_INPUT', deprecated: true, deprecated_field: 'sub_tenant_id', preferred_field: 'collection', success: false });

    const empty = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: ' ', tenant_id: 'fbdb' } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('FEEDBACK_EMPTY');
    expect(empty.body.detail).toMatchObject({ error_code: 'FEEDBACK_EMPTY', deprecated: true, deprecated_field: 'tenant_id', preferred_field: 'database' });
    expect(empty.body.meta.deprecation[0].deprecated_field).toBe('tenant_id');
  });

  it('a database outside the key\'s reach, or missing, is 404 and nothing is recorded', async () => {
    const { key } = await t.keys.create('default', { databases: ['fbother'] });
    const before = (await feedbackEvents()).length;
    const res = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'x', database: 'fbdb' }, headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('DATABASE_NOT_FOUND');
    const missing = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'x', database: 'nope' } });
    expect(missing.status).toBe(404);
    expect((await feedbackEvents()).length).toBe(before);
    // the limited key cannot link to a query in a database it cannot reach
    const unlinked = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'x' }, headers: { authorization: `Bearer ${key}` } });
    expect(unlinked.body.data.linked).toBe(false);
    const other = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'x' }, headers: { authorization: `Bearer ${(await t.keys.create('someone-else')).key}` } });
    expect(other.body.data.linked).toBe(false); // another organization's query is unknown
  });

  it('rate limit: 100 per minute per organization, then 429 with Retry-After; retrying after the wait succeeds', async () => {
    const { key } = await t.keys.create('busy-org');
    const { key: neighbour } = await t.keys.create('quiet-org');
    const limiter = t.rateLimiter as unknown as { now: () => number };
    const realNow = limiter.now;
    const windowStart = Math.ceil(Date.now() / 60_000) * 60_000 + 60_000;
    let now = windowStart + 15_000; // 45 seconds left in this window
    limiter.now = () => now;
    try {
      const send = (k: string) => t.request('POST', '/feedback', { body: { request_id: UNKNOWN, feedback: 'spam?' }, headers: { authorization: `Bearer ${k}` } });
      for (let i = 0; i < 100; i++) expect((await send(key)).status).toBe(201);
      const before = (await feedbackEvents()).length;
      const limited = await send(key);
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ success: false, data: null, error: { code: 'RATE_LIMITED' } });
      expect(limited.headers['retry-after']).toBe('45');
      expect(limited.body.error.message).toMatch(/retry after 45 seconds/);
      expect((await feedbackEvents()).length).toBe(before);
      expect((await send(neighbour)).status).toBe(201); // counted per organization
      now += 45_000; // wait as told
      expect((await send(key)).status).toBe(201);
    } finally {
      limiter.now = realNow;
    }
  });

  it('a storage failure is 500 and records nothing (so a retry cannot duplicate)', async () => {
    const rowsBefore = (await rows()).length;
    const eventsBefore = (await feedbackEvents()).length;
    const store = t.store;
    const append = store.append;
    store.append = async () => {
      throw new Error('disk full');
    };
    let res;
    try {
      res = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'will not be stored' } });
    } finally {
      store.append = append;
    }
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ success: false, data: null, error: { code: 'FEEDBACK_NOT_RECORDED' } });
    expect(res.body.error.message).toMatch(/nothing was recorded/);
    expect((await rows()).length).toBe(rowsBefore);
    expect((await feedbackEvents()).length).toBe(eventsBefore);
    expect(JSON.stringify(await t.store.readAll())).not.toContain('will not be stored');
    const retry = await t.request('POST', '/feedback', { body: { request_id: requestId, feedback: 'will not be stored' } });
    expect(retry.status).toBe(201);
    expect((await rows()).length).toBe(rowsBefore + 1);
  });

  it('crs feedback export (NDJSON, --database, --since) and report (recall@k, MRR from ground_truth.source_ids)', async () => {
    // a second query whose ground truth was never retrieved: reciprocal rank 0
    await t.request('POST', '/feedback', { body: { request_id: otherRequestId, rating: 'negative', ground_truth: { source_ids: ['not-ingested'] } } });
    const all = await crs(t, 'feedback', 'export');
    expect(all.code).toBe(0);
    const lines = all.out.map((l) => JSON.parse(l));
    expect(lines.length).toBe((await rows()).filter((r: any) => r.org_id === 'default').length);
    expect(lines.every((l, i) => i === 0 || l.created_at >= lines[i - 1].created_at)).toBe(true);
    const first = lines[0];
    expect(first).toMatchObject({ request_id: requestId, database: 'fbdb', rating: 'positive', linked: true, ground_truth: { answer: 'voles', source_ids: ['kestrel'] } });
    expect(first.query.text).toBe('kestrel hunting voles');
    expect(first.query.results[0].id).toBe('kestrel');

    const onlyDb = (await crs(t, 'feedback', 'export', '--database', 'fbother')).out.map((l) => JSON.parse(l));
    expect(onlyDb.map((l) => l.feedback)).toEqual(['wrong db']);
    const since = (await crs(t, 'feedback', 'export', '--since', lines[lines.length - 1].created_at)).out.map((l) => JSON.parse(l));
    expect(since.length).toBeGreaterThanOrEqual(1);
    expect(since.every((l) => l.created_at >= lines[lines.length - 1].created_at)).toBe(true);
    expect((await crs(t, 'feedback', 'export', '--since', 'yesterday-ish')).code).toBe(1);

    const report = await crs(t, 'feedback', 'report', '--database', 'fbdb', '--json');
    expect(report.code).toBe(0);
    const r = JSON.parse(report.out[0]);
    expect(r.evaluation.queries).toBe(2);
    expect(r.evaluation.mrr).toBe(0.5); // kestrel ranked first (1), not-ingested never retrieved (0)
    expect(r.evaluation.recall_at).toEqual({ '1': 0.5, '3': 0.5, '5': 0.5, '10': 0.5 });
    expect(r.evaluation.per_query.find((q: any) => q.requestId === requestId)).toMatchObject({ firstRelevantRank: 1, query: 'kestrel hunting voles' });
    expect(r.ratings.negative).toBe(1);
    const text = await crs(t, 'feedback', 'report');
    expect(text.out.join('\n')).toMatch(/recall@1 0\.500 .*MRR 0\.500/);
  });

  it('documents the endpoint in the OpenAPI document', async () => {
    const doc = await t.request('GET', '/docs-json');
    expect(doc.status).toBe(200);
    expect(doc.body.paths['/feedback'].post).toBeDefined();
    expect(doc.body.paths['/webhooks/indexing/deliveries/{delivery_id}/retry'].post).toBeDefined();
  });

  it('rebuilding the feedback read model reproduces it exactly', async () => {
    const before = await t.ds.query('SELECT t::text FROM rm_feedback t ORDER BY feedback_id');
    await t.runner.rebuild('feedback');
    expect(await t.ds.query('SELECT t::text FROM rm_feedback t ORDER BY feedback_id')).toEqual(before);
    const v = await verifyProjection(t.runner, t.ds, t.config.databaseUrl, 'feedback');
    expect(v.equal).toBe(true);
  });
});
