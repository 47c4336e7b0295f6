import { randomUUID } from 'node:crypto';
import { createHmac } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { configFromEnv } from '@crs/config';
import { WebhookDispatcher } from '@crs/webhooks/webhook-dispatcher';
import { verifyProjection } from '@crs/persistence/projection-verifier';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, postMultipart, waitForDatabaseDeleted, waitForStatus } from '../support/ingest';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: any;
}

/** A real webhook receiver on 127.0.0.1: records raw bytes, answers what `respond` says (or hangs). */
class Receiver {
  received: Received[] = [];
  respond: (r: Received) => number | 'hang' = () => 200;
  private server?: Server;
  private readonly hanging = new Set<ServerResponse>();

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const r: Received = { path: req.url ?? '', headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')) };
        this.received.push(r);
        const answer = this.respond(r);
        if (answer === 'hang') {
          this.hanging.add(res);
          res.on('close', () => this.hanging.delete(res));
          return;
        }
        res.writeHead(answer, answer >= 300 && answer < 400 ? { location: this.url('/elsewhere') } : { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  url(path = '/hooks/indexing'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Answers every held request now. */
  release(status: number): void {
    for (const res of this.hanging) res.writeHead(status).end();
    this.hanging.clear();
  }

  forItem(id: string): Received[] {
    return this.received.filter((r) => r.body.id === id);
  }

  async waitFor(pred: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`receiver: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    await new Promise((r) => this.server?.close(r));
  }
}

const hex = (secret: string, raw: Buffer) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

describe('indexing webhooks', () => {
  let t: TestApp;
  const receiver = new Receiver();
  const schedule = [60, 60, 60]; // 4 attempts per round
  const webhookConfig = { ...configFromEnv({}, 'postgres://unused').webhooks, allowLoopback: true, retryScheduleMs: schedule, retryJitter: 0.2, leaseMs: 3000, pollMs: 25, timeoutMs: 3000 };

  /** Every delivery record, all pages. */
  const deliveries = async (): Promise<any[]> => {
    const res = await t.request('GET', '/webhooks/indexing/deliveries?limit=100');
    expect(res.status).toBe(200);
    return res.body.deliveries;
  };
  const recordFor = async (docId: string) => (await deliveries()).filter((d) => d.doc_id === docId);
  const waitForRecord = async (docId: string, statuses: string[], timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    let last: any[] = [];
    while (Date.now() < deadline) {
      last = await recordFor(docId);
      if (last.length && statuses.includes(last[0].status)) return last[0];
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`delivery for ${docId} did not reach ${statuses.join('/')}: ${JSON.stringify(last)}`);
  };
  const ingest = async (id: string, text = `Webhook test memory ${id} about a heron by the river.`) => {
    const res = await ingestMemories(t, 'hooks', [{ id, text }]);
    expect(res.status).toBe(200);
    await waitForStatus(t, 'hooks', [id]);
  };
  const attemptsOf = async (deliveryId: string) =>
    (await t.store.readAll()).filter((e) => e.type === 'DeliveryAttempted').filter((e) => e.data.deliveryId === deliveryId).map((e) => ({ ...e.data, occurredAt: e.metadata.occurredAt }));

  beforeAll(async () => {
    await receiver.start();
    t = await startTestApp('webhooks', { webhooks: webhookConfig });
    await t.createDatabase('hooks');
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('registration: returned directly (no envelope), one per organization, replaced on re-registration, secret kept unless sent', async () => {
    const none = await t.request('GET', '/webhooks/indexing');
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ registered: false, url: null, event_types: [], signing_secret_configured: false });

    // Nothing is registered yet: an item reaching completed now creates no delivery record, ever.
    await ingest('before-registration');

    const reg = await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url(), event_types: ['indexing.status_changed'], generate_signing_secret: true } });
    expect(reg.status).toBe(200);
    expect(reg.body).not.toHaveProperty('success');
    expect(reg.body).toEqual({
      registered: true,
      url: receiver.url(),
      event_types: ['indexing.status_changed'],
      signing_secret_configured: true,
      message: expect.stringContaining('generated'),
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const got = await t.request('GET', '/webhooks/indexing');
    expect(got.body).toEqual({ registered: true, url: receiver.url(), event_types: ['indexing.status_changed'], signing_secret_configured: true });
    expect(got.raw).not.toContain(reg.body.signing_secret);

    // Editing the URL or events without signing_secret keeps the secret (and never returns it again).
    const edit = await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url('/v2') } });
    expect(edit.body).toMatchObject({ registered: true, url: receiver.url('/v2'), event_types: ['indexing.status_changed'], signing_secret_configured: true });
    expect(edit.body).not.toHaveProperty('signing_secret');

    const both = await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url(), signing_secret: 'a-supplied-secret-123', generate_signing_secret: true } });
    expect(both.status).toBe(422);
    expect(both.body).toMatchObject({ success: false, error: { code: 'SIGNING_SECRET_CONFLICT' } });
    const short = await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url(), signing_secret: 'fifteen-chars!!' } });
    expect(short.status).toBe(400);
    expect(short.body.error.message).toMatch(/signing_secret must be at least 16 characters/);
    const badType = await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url(), event_types: ['indexing.deleted'] } });
    expect(badType.status).toBe(400);
    expect(badType.body.error.message).toMatch(/unknown event type 'indexing.deleted'/);
    const noUrl = await t.request('POST', '/webhooks/indexing');
    expect(noUrl.status).toBe(400);
    expect(noUrl.body.error.code).toBe('WEBHOOK_URL_INVALID');
    expect((await t.request('GET', '/webhooks/indexing')).body.url).toBe(receiver.url('/v2')); // rejected edits changed nothing

    // DELETE without body or Content-Type, twice.
    const del = await t.request('DELETE', '/webhooks/indexing');
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ deleted: true, message: expect.any(String) });
    expect((await t.request('DELETE', '/webhooks/indexing')).body).toEqual({ deleted: false, message: 'No webhook was registered' });
    expect((await t.request('GET', '/webhooks/indexing')).body.registered).toBe(false);
    const noHook = await t.request('POST', '/webhooks/indexing/signing-secret');
    expect(noHook.status).toBe(404);
    expect(noHook.body.error.code).toBe('WEBHOOK_NOT_REGISTERED');
    expect(await recordFor('before-registration')).toEqual([]);
  });

  it('the webhook is organization-wide: a key limited to some databases cannot change it or test it (403), and changes nothing', async () => {
    const reg = await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url('/owner'), signing_secret: 'the-owners-secret-0001' } });
    expect(reg.status).toBe(200);
    const { key } = await t.keys.create('default', { databases: ['hooks-elsewhere'] });
    const limited = { authorization: `Bearer ${key}` };
    const eventsBefore = (await t.store.readAll()).length;
    const attempts: [string, string, object | undefined][] = [
      ['POST', '/webhooks/indexing', { url: receiver.url('/stolen'), generate_signing_secret: true }],
      ['DELETE', '/webhooks/indexing', undefined],
      ['POST', '/webhooks/indexing/signing-secret', undefined],
      ['POST', '/webhooks/indexing/signing-secret', { signing_secret: 'an-attackers-secret-01' }],
      ['DELETE', '/webhooks/indexing/signing-secret', undefined],
      ['POST', '/webhooks/indexing/test', undefined],
    ];
    for (const [method, path, body] of attempts) {
      const res = await t.request(method, path, { body, headers: limited });
      expect([method, path, res.status]).toEqual([method, path, 403]);
      expect(res.body).toMatchObject({ success: false, error: { code: 'FORBIDDEN', message: expect.stringContaining('whole organization') } });
      expect(res.raw).not.toContain('whsec_');
    }
    expect((await t.store.readAll()).length).toBe(eventsBefore);
    expect(receiver.received.filter((r) => r.path === '/stolen' || r.body?.test === true && r.path === '/owner')).toEqual([]);
    // Reading stays open to it: the registration (never a secret; of the URL only its origin, as a receiver's path or
    // query often holds a token) and its own databases' delivery records.
    const got = await t.request('GET', '/webhooks/indexing', { headers: limited });
    expect(got.body).toEqual({ registered: true, url: `${new URL(receiver.url('/owner')).origin}/…`, event_types: ['indexing.status_changed'], signing_secret_configured: true });
    expect(got.raw).not.toContain('/owner');
    expect((await t.request('GET', '/webhooks/indexing')).body.url).toBe(receiver.url('/owner')); // an organization key sees it whole
    expect((await t.request('GET', '/webhooks/indexing/deliveries', { headers: limited })).status).toBe(200);
    expect((await t.request('DELETE', '/webhooks/indexing')).status).toBe(200); // an organization key may
  });

  it('signing secrets are encrypted at rest, never in the event log, and the key file is 0600', async () => {
    const secret = 'my-supplied-secret-do-not-leak';
    const reg = await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url(), signing_secret: secret } });
    expect(reg.body).toMatchObject({ signing_secret_configured: true });
    expect(reg.body).not.toHaveProperty('signing_secret');
    const gen = await t.request('POST', '/webhooks/indexing/signing-secret'); // bodyless: generate
    expect(gen.status).toBe(200);
    expect(gen.body).toEqual({ signing_secret: expect.stringMatching(/^whsec_/), generated: true, signing_secret_configured: true, message: expect.any(String) });
    const supplied = await t.request('POST', '/webhooks/indexing/signing-secret', { body: { signing_secret: secret } });
    expect(supplied.body).toEqual({ generated: false, signing_secret_configured: true, message: expect.any(String) });
    const conflict = await t.request('POST', '/webhooks/indexing/signing-secret', { body: { signing_secret: secret, generate_signing_secret: true } });
    expect(conflict.status).toBe(422);
    // An explicit "do not generate" with nothing supplied sets nothing (and never rotates the secret).
    const setsBefore = (await t.store.readAll()).filter((e) => e.type === 'SigningSecretSet').length;
    const nothing = await t.request('POST', '/webhooks/indexing/signing-secret', { body: { generate_signing_secret: false } });
    expect(nothing.status).toBe(400);
    expect(nothing.body).toMatchObject({ success: false, error: { code: 'INVALID_INPUT', message: expect.stringContaining('nothing to set') } });
    expect((await t.store.readAll()).filter((e) => e.type === 'SigningSecretSet')).toHaveLength(setsBefore);

    const log = JSON.stringify(await t.store.readAll());
    expect(log).not.toContain(secret);
    expect(log).not.toContain(gen.body.signing_secret);
    expect(log).toContain('SigningSecretSet');
    const tables: { table_name: string }[] = await t.ds.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`);
    for (const { table_name } of tables) {
      const dump = JSON.stringify(await t.ds.query(`SELECT t::text AS r FROM "${table_name}" t`));
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(Buffer.from(secret).toString('hex'));
    }
    const rows = await t.ds.query('SELECT * FROM webhook_signing_secrets');
    expect(rows).toHaveLength(1); // superseded secrets are deleted
    expect(rows[0].ciphertext.toString('utf8')).not.toContain(secret);
    expect(statSync(join(t.config.dataDir, 'webhook-secret.key')).mode & 0o777).toBe(0o600);
    expect((await t.request('GET', '/webhooks/indexing')).raw).not.toContain(secret);
  });

  it('delivers indexing.status_changed with the spec payload and headers, signed over the raw bytes (both schemes)', async () => {
    const secret = 'delivery-secret-0123456789';
    await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url(), signing_secret: secret } });
    await ingest('d1');
    await ingest('d2');
    await receiver.waitFor(() => receiver.forItem('d1').length > 0 && receiver.forItem('d2').length > 0, 'd1 and d2');
    const r = receiver.forItem('d1')[0];
    const db = (await t.directory.find('default', 'hooks'))!;
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-service-event']).toBe('indexing.status_changed');
    expect(r.headers['x-service-delivery-id']).toBe(r.body.delivery_id);
    expect(r.headers['x-service-signature']).toBe(hex(secret, r.raw));
    expect(r.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    // Standard Webhooks: v1,<base64 HMAC of "id.timestamp.body">
    const ts = r.headers['webhook-timestamp'] as string;
    expect(r.headers['webhook-id']).toBe(r.body.delivery_id);
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
    const std = createHmac('sha256', secret).update(`${r.body.delivery_id}.${ts}.`).update(r.raw).digest('base64');
    expect(r.headers['webhook-signature']).toBe(`v1,${std}`);
    expect(Object.keys(r.body)).toEqual(['event', 'delivery_id', 'id', 'database', 'collection', 'status', 'timestamp', 'tenant_id', 'sub_tenant_id']);
    expect(r.body).toEqual({
      event: 'indexing.status_changed',
      delivery_id: expect.stringMatching(/^dlv_[0-9a-f-]{36}$/),
      id: 'd1',
      database: 'hooks',
      collection: 'default',
      status: 'completed',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      tenant_id: db.id, // deprecated: the database id, not its name
      sub_tenant_id: 'default',
    });

    const rec = await waitForRecord('d1', ['delivered']);
    expect(rec).toEqual({
      delivery_id: r.body.delivery_id,
      doc_id: 'd1',
      status: 'delivered',
      indexing_status: 'completed',
      event_type: 'indexing.status_changed',
      attempts: 1,
      error_code: null,
      error_message: null,
      created_at: r.body.timestamp,
      updated_at: expect.any(String),
      database: 'hooks',
      collection: 'default',
      next_attempt_at: null,
      last_status_code: 200,
    });
    await waitForRecord('d2', ['delivered']);

    // get one (percent-encoded path); unknown -> 404
    const one = await t.request('GET', `/webhooks/indexing/deliveries/${encodeURIComponent(rec.delivery_id)}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(rec);
    const missing = await t.request('GET', `/webhooks/indexing/deliveries/${encodeURIComponent('d/1 nope')}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('DELIVERY_NOT_FOUND');

    // list: newest first, pages by opaque cursor, status filter, limits
    const p1 = await t.request('GET', '/webhooks/indexing/deliveries?limit=1');
    expect(p1.body).toEqual({ deliveries: [expect.objectContaining({ doc_id: 'd2' })], count: 1, next_cursor: expect.any(String) });
    const p2 = await t.request('GET', `/webhooks/indexing/deliveries?limit=1&cursor=${encodeURIComponent(p1.body.next_cursor)}`);
    expect(p2.body.deliveries[0].doc_id).toBe('d1');
    const delivered = await t.request('GET', '/webhooks/indexing/deliveries?status=delivered&limit=100');
    expect(delivered.body.deliveries.every((d: any) => d.status === 'delivered')).toBe(true);
    expect((await t.request('GET', '/webhooks/indexing/deliveries?status=failed')).body).toEqual({ deliveries: [], count: 0, next_cursor: null });
    for (const bad of ['limit=0', 'limit=101', 'limit=abc', 'status=done', 'cursor=garbage', 'page=2']) {
      const res = await t.request('GET', `/webhooks/indexing/deliveries?${bad}`);
      expect([bad, res.status, res.body.error?.code]).toEqual([bad, 400, 'INVALID_INPUT']);
    }
    // one record per event, never a duplicate delivery_id
    const all = await deliveries();
    expect(new Set(all.map((d) => d.delivery_id)).size).toBe(all.length);
    expect(all.filter((d) => d.doc_id === 'd1')).toHaveLength(1);
  });

  it('an errored item is delivered with error_code and error_message', async () => {
    const docx = readFileSync(join(__dirname, '../fixtures/ingestion/random-bytes.docx'));
    const res = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'hooks', document_metadata: JSON.stringify([{ id: 'broken' }]) }, [
      { filename: 'random-bytes.docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', content: docx },
    ]);
    expect(res.status).toBe(200);
    const [st] = await waitForStatus(t, 'hooks', ['broken'], ['errored']);
    await receiver.waitFor(() => receiver.forItem('broken').length > 0, 'the errored item');
    const { body } = receiver.forItem('broken')[0];
    expect(body).toMatchObject({ status: 'errored', error_code: st.error_code, error_message: st.message, id: 'broken' });
    expect(Object.keys(body)).toEqual(['event', 'delivery_id', 'id', 'database', 'collection', 'status', 'timestamp', 'error_code', 'error_message', 'tenant_id', 'sub_tenant_id']);
    expect(await waitForRecord('broken', ['delivered'])).toMatchObject({ indexing_status: 'errored' });
  });

  it('memories derived by inference send no events of their own: only the ingested item is delivered', async () => {
    await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url() } });
    const res = await ingestMemories(t, 'hooks', [{ id: 'prefs', user_assistant_pairs: [{ user: 'I prefer aisle seats on short flights.', assistant: 'Noted.' }], infer: true }]);
    expect(res.status).toBe(200);
    await waitForStatus(t, 'hooks', ['prefs']);
    await waitForRecord('prefs', ['delivered']);
    let derived: { item_id: string; status: string }[] = [];
    for (let i = 0; i < 300 && !(derived.length && derived.every((d) => d.status === 'completed')); i++) {
      derived = await t.ds.query(`SELECT item_id, status FROM rm_items WHERE additional_metadata->>'derived_from' = 'prefs'`);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(derived.map((d) => [d.item_id, d.status])).toEqual([['prefs::inferred:0', 'completed']]);
    const statuses = (await t.store.readAll()).filter((e) => e.type === 'StatusAdvanced').filter((e) => e.data.itemId === 'prefs::inferred:0');
    expect(statuses.map((e) => [e.data.status, e.data.derived])).toContainEqual(['completed', true]);
    await t.runner.waitFor(await t.store.headPosition(), ['webhook-outbox'], 10_000);
    expect((await deliveries()).filter((d) => d.doc_id.startsWith('prefs'))).toEqual([expect.objectContaining({ doc_id: 'prefs', status: 'delivered' })]);
    expect(receiver.received.filter((r) => String(r.body.id).startsWith('prefs::'))).toEqual([]);
  });

  it('retries failures on the schedule until permanently_failed, then a manual retry delivers; 409 otherwise', async () => {
    receiver.respond = (r) => (r.body.id === 'flaky' ? 500 : 200);
    await ingest('flaky');
    const rec = await waitForRecord('flaky', ['permanently_failed']);
    expect(rec).toMatchObject({ attempts: schedule.length + 1, error_code: 'HTTP_500', error_message: 'receiver answered 500', next_attempt_at: null, last_status_code: 500 });
    const hits = receiver.forItem('flaky');
    expect(hits).toHaveLength(schedule.length + 1);
    expect(new Set(hits.map((h) => h.headers['x-service-delivery-id']))).toEqual(new Set([rec.delivery_id])); // stable across retries
    expect(new Set(hits.map((h) => h.raw.toString('utf8'))).size).toBe(1); // the same bytes every time
    const attempts = await attemptsOf(rec.delivery_id);
    expect(attempts.map((a) => [a.attempt, a.status, a.statusCode])).toEqual([
      [1, 'failed', 500],
      [2, 'failed', 500],
      [3, 'failed', 500],
      [4, 'permanently_failed', 500],
    ]);
    for (const a of attempts.slice(0, 3)) {
      // the next attempt time, jitter included, is decided when the attempt is recorded and kept in the event
      const delay = Date.parse(String(a.nextAttemptAt)) - Date.parse(a.occurredAt);
      expect(delay).toBeGreaterThanOrEqual(60 * 0.8 - 1);
      expect(delay).toBeLessThanOrEqual(60 * 1.2 + 1);
    }
    expect(attempts[3].nextAttemptAt).toBeNull();
    expect(attempts.every((a) => typeof a.durationMs === 'number')).toBe(true);

    receiver.respond = () => 200;
    const retry = await t.request('POST', `/webhooks/indexing/deliveries/${encodeURIComponent(rec.delivery_id)}/retry`); // bodyless
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ delivery_id: rec.delivery_id, queued: true, message: expect.any(String) });
    const done = await waitForRecord('flaky', ['delivered']);
    expect(done).toMatchObject({ attempts: schedule.length + 2, error_code: null });

    const again = await t.request('POST', `/webhooks/indexing/deliveries/${rec.delivery_id}/retry`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('DELIVERY_NOT_RETRYABLE');
    expect((await t.request('POST', '/webhooks/indexing/deliveries/dlv_nope/retry')).status).toBe(404);
  });

  it('a secret set while a delivery is in flight signs its next attempt; removing it stops the signature headers', async () => {
    const oldSecret = 'rotation-secret-old-000';
    const newSecret = 'rotation-secret-new-111';
    await t.request('POST', '/webhooks/indexing/signing-secret', { body: { signing_secret: oldSecret } });
    receiver.respond = (r) => (r.body.id === 'rotate' && receiver.forItem('rotate').length === 1 ? 'hang' : 200);
    await ingest('rotate');
    await receiver.waitFor(() => receiver.forItem('rotate').length === 1, 'the first attempt');
    // The first attempt is on the wire, signed with the old secret; the secret changes now ...
    const set = await t.request('POST', '/webhooks/indexing/signing-secret', { body: { signing_secret: newSecret } });
    expect(set.status).toBe(200);
    receiver.release(503); // ... and that attempt fails
    await waitForRecord('rotate', ['delivered']);
    const [a, b] = receiver.forItem('rotate');
    expect(a.headers['x-service-signature']).toBe(hex(oldSecret, a.raw));
    expect(b.headers['x-service-signature']).toBe(hex(newSecret, b.raw)); // no overlap period: exactly the new secret
    expect(b.raw.equals(a.raw)).toBe(true);

    const removed = await t.request('DELETE', '/webhooks/indexing/signing-secret'); // no body, no Content-Type
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ deleted: true, signing_secret_configured: false, message: expect.any(String) });
    expect((await t.request('GET', '/webhooks/indexing')).body.signing_secret_configured).toBe(false);
    expect((await t.request('DELETE', '/webhooks/indexing/signing-secret')).body.deleted).toBe(false);
    await ingest('unsigned');
    await receiver.waitFor(() => receiver.forItem('unsigned').length > 0, 'the unsigned delivery');
    const u = receiver.forItem('unsigned')[0];
    expect(u.headers).not.toHaveProperty('x-service-signature');
    expect(u.headers).not.toHaveProperty('webhook-signature');
    expect(u.headers).not.toHaveProperty('webhook-id');
    expect(u.headers['x-service-delivery-id']).toBe(u.body.delivery_id);
    expect(await t.ds.query('SELECT * FROM webhook_signing_secrets')).toEqual([]);
  });

  it('test delivery: synthetic shape, no delivery record; reports failures', async () => {
    const before = (await deliveries()).length;
    receiver.respond = () => 200;
    const secret = 'test-event-secret-42424242';
    await t.request('POST', '/webhooks/indexing/signing-secret', { body: { signing_secret: secret } });
    const res = await t.request('POST', '/webhooks/indexing/test'); // no body, no Content-Type
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: true, status_code: 200, message: expect.any(String) });
    const hit = receiver.received.find((r) => r.body.test === true)!;
    expect(hit.body).toEqual({
      event: 'indexing.status_changed',
      delivery_id: expect.stringMatching(/^test_/),
      id: 'test_document',
      database: 'default',
      collection: 'default',
      status: 'completed',
      timestamp: expect.any(String),
      tenant_id: 'default',
      sub_tenant_id: 'default',
      test: true,
    });
    expect(hit.headers['x-service-signature']).toBe(hex(secret, hit.raw));
    expect(hit.headers['x-service-delivery-id']).toBe(hit.body.delivery_id);
    expect((await deliveries()).length).toBe(before);
    receiver.respond = (r) => (r.body.test ? 500 : 200);
    const failed = await t.request('POST', '/webhooks/indexing/test');
    expect(failed.body).toMatchObject({ delivered: false, status_code: 500 });
    // redirects are never followed
    receiver.respond = (r) => (r.body.test ? 307 : 200);
    const redirected = await t.request('POST', '/webhooks/indexing/test');
    expect(redirected.body).toMatchObject({ delivered: false, status_code: 307 });
    expect(redirected.body.message).toMatch(/redirects are not followed/);
    expect(receiver.received.filter((r) => r.path === '/elsewhere')).toEqual([]);
    // a receiver that does not answer within the time-out
    receiver.respond = (r) => (r.body.test ? 'hang' : 200);
    const started = Date.now();
    const slow = await t.request('POST', '/webhooks/indexing/test');
    expect(slow.body).toMatchObject({ delivered: false, status_code: null });
    expect(slow.body.message).toMatch(/TIMEOUT.*3000 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    receiver.release(200);
    receiver.respond = () => 200;
  });

  it('a dispatcher killed mid-delivery: the lease expires, the event is still delivered, one record, one delivery_id', async () => {
    await t.webhooks.dispatcher.stop();
    const quiet = { info: () => undefined, error: () => undefined };
    const doomed = new WebhookDispatcher(t.ds, t.store, t.runner, t.webhooks.vault, t.webhooks.sender, quiet, { ...t.webhooks.dispatcher.options, leaseMs: 1000 });
    receiver.respond = (r) => (r.body.id === 'crash' && receiver.forItem('crash').length === 1 ? 'hang' : 200);
    doomed.start();
    await ingest('crash');
    await receiver.waitFor(() => receiver.forItem('crash').length === 1, 'the doomed attempt');
    expect((await recordFor('crash'))[0].status).toBe('sweeping');
    expect((await t.request('GET', '/webhooks/indexing/deliveries?status=sweeping')).body.deliveries.map((d: any) => d.doc_id)).toContain('crash');
    const sweeping = (await recordFor('crash'))[0];
    const retryWhileSweeping = await t.request('POST', `/webhooks/indexing/deliveries/${sweeping.delivery_id}/retry`);
    expect(retryWhileSweeping.status).toBe(409);

    await doomed.abandon(); // the process dies: connection cut, nothing recorded, lease left behind
    t.webhooks.dispatcher.start();
    const rec = await waitForRecord('crash', ['delivered']);
    expect(rec.attempts).toBe(1); // the dead dispatcher recorded nothing
    const hits = receiver.forItem('crash');
    expect(hits.length).toBe(2); // at-least-once: the receiver saw it twice ...
    expect(new Set(hits.map((h) => h.body.delivery_id))).toEqual(new Set([rec.delivery_id])); // ... under one delivery_id
    expect(await recordFor('crash')).toHaveLength(1);
    expect(await attemptsOf(rec.delivery_id)).toHaveLength(1);
    const all = await deliveries();
    expect(new Set(all.map((d) => d.delivery_id)).size).toBe(all.length);
  });

  it('pins the checked address: a name (resolved by the guard) is delivered without a second DNS lookup', async () => {
    const guard = t.webhooks.guard;
    const realLookup = guard.lookup;
    const lookups: string[] = [];
    guard.lookup = async (host) => {
      lookups.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    try {
      // receiver.crs-test.invalid does not exist in DNS: only the pinned address can reach the receiver.
      const url = `http://receiver.crs-test.invalid:${receiver.port}/pinned`;
      expect((await t.request('POST', '/webhooks/indexing', { body: { url } })).status).toBe(200);
      await ingest('pinned');
      await waitForRecord('pinned', ['delivered']);
      expect(receiver.forItem('pinned')[0].headers.host).toBe(`receiver.crs-test.invalid:${receiver.port}`);
      expect(lookups.filter((h) => h === 'receiver.crs-test.invalid').length).toBe(2); // registration + the one delivery
    } finally {
      guard.lookup = realLookup;
      await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url() } });
    }
  });

  it('only registrations that subscribe at the time create records; a deleted registration ends pending deliveries', async () => {
    await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url(), event_types: [] } });
    await ingest('unsubscribed');
    await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url(), event_types: ['indexing.status_changed', 'indexing.status_changed'] } });
    expect((await t.request('GET', '/webhooks/indexing')).body.event_types).toEqual(['indexing.status_changed']);
    await ingest('subscribed');
    await waitForRecord('subscribed', ['delivered']);
    expect(await recordFor('unsubscribed')).toEqual([]);
    expect(receiver.forItem('unsubscribed')).toEqual([]);

    await t.webhooks.dispatcher.stop();
    await ingest('orphaned');
    await waitForRecord('orphaned', ['pending']);
    await t.request('DELETE', '/webhooks/indexing');
    t.webhooks.dispatcher.start();
    expect(await waitForRecord('orphaned', ['permanently_failed'])).toMatchObject({ error_code: 'WEBHOOK_NOT_REGISTERED', attempts: 1 });
    expect(receiver.forItem('orphaned')).toEqual([]);
    await t.request('POST', '/webhooks/indexing', { body: { url: receiver.url() } });
  });

  it('deleting an item removes its delivery records at once; their streams go with its database', async () => {
    await t.createDatabase('single');
    await ingestMemories(t, 'single', [{ id: 'solo', text: 'A memory deleted on its own.' }, { id: 'stays', text: 'Its neighbour, which stays.' }]);
    await waitForStatus(t, 'single', ['solo', 'stays']);
    const rec = await waitForRecord('solo', ['delivered']);
    await waitForRecord('stays', ['delivered']);
    const db = (await t.directory.find('default', 'single'))!;
    const [{ item_key: soloKey }] = await t.ds.query(`SELECT item_key FROM rm_items WHERE database_id = $1 AND item_id = 'solo'`, [db.id]);

    const del = await t.request('DELETE', '/context', { body: { database: 'single', ids: ['solo'] } });
    expect(del.body.data.deleted_count).toBe(1);
    expect(await recordFor('solo')).toEqual([]);
    expect((await t.request('GET', `/webhooks/indexing/deliveries/${rec.delivery_id}`)).status).toBe(404);
    expect((await t.request('POST', `/webhooks/indexing/deliveries/${rec.delivery_id}/retry`)).status).toBe(404);
    expect(await recordFor('stays')).toHaveLength(1);
    // The delivery's stream stays as the item's own does (ItemDeleted its record) until the database goes.
    expect((await t.store.readStream(`delivery-${rec.delivery_id}`)).length).toBeGreaterThan(0);

    expect((await t.request('DELETE', '/databases?database=single')).status).toBe(202);
    await waitForDatabaseDeleted(t, db.id, 30_000);
    expect(await t.store.readStream(`delivery-${rec.delivery_id}`)).toEqual([]);
    expect(await t.store.readStream(`item-${db.id}-${soloKey}`)).toEqual([]);
  });

  it('deleting a database removes its delivery records, delivery streams and feedback streams', async () => {
    await t.createDatabase('gone');
    await ingestMemories(t, 'gone', [{ id: 'secret-doc', text: 'A memory in a database that will be deleted.' }]);
    await waitForStatus(t, 'gone', ['secret-doc']);
    await receiver.waitFor(() => receiver.forItem('secret-doc').length > 0, 'the delivery');
    const rec = await waitForRecord('secret-doc', ['delivered']);
    const q = await t.request('POST', '/query', { body: { database: 'gone', query: 'deleted database memory' } });
    const fb = await t.request('POST', '/feedback', { body: { request_id: q.body.meta.request_id, feedback: 'about to vanish' } });
    expect(fb.body.data.linked).toBe(true);
    const db = (await t.directory.find('default', 'gone'))!;
    // A live delivery's stream stays (the late-delivery sweeper judges every attempt).
    const [attempt] = (await t.store.readStream(`delivery-${rec.delivery_id}`)).slice(-1);
    expect(attempt?.type).toBe('DeliveryAttempted');
    if (attempt.type !== 'DeliveryAttempted') throw new Error(`expected DeliveryAttempted, got ${attempt.type}`);
    expect(await t.runner.waitFor(attempt.position, ['late-delivery-sweeper'], 10_000)).toBe(true);
    expect((await t.store.readStream(`delivery-${rec.delivery_id}`)).length).toBeGreaterThan(0);

    expect((await t.request('DELETE', '/databases?database=gone')).status).toBe(202);
    const deadline = Date.now() + 30_000;
    let deleted: any;
    while (!deleted && Date.now() < deadline) {
      deleted = (await t.store.readAll()).find((e) => e.type === 'DatabaseDeleted' && e.data.databaseId === db.id);
      if (!deleted) await new Promise((r) => setTimeout(r, 50));
    }
    expect(deleted).toBeDefined();
    expect(await t.runner.waitFor(deleted.position, ['webhook-outbox', 'feedback'], 10_000)).toBe(true);
    expect(await recordFor('secret-doc')).toEqual([]);
    expect((await t.request('GET', `/webhooks/indexing/deliveries/${rec.delivery_id}`)).status).toBe(404);
    expect(await t.store.readStream(`delivery-${rec.delivery_id}`)).toEqual([]);
    expect(await t.store.readStream(`feedback-${fb.body.data.feedback_id}`)).toEqual([]);
    // An attempt the dispatcher records after the deletion (its receiver answered late) starts the stream anew: swept.
    const late = await t.store.append(`delivery-${rec.delivery_id}`, [
      { type: 'DeliveryAttempted', data: { ...attempt.data, attempt: attempt.data.attempt + 1 }, metadata: { eventId: randomUUID(), occurredAt: new Date().toISOString(), orgId: 'default', databaseId: db.id, actor: 'system:webhook-dispatcher' } },
    ]);
    expect(await t.runner.waitFor(late.position, ['late-delivery-sweeper'], 10_000)).toBe(true);
    expect(await t.store.readStream(`delivery-${rec.delivery_id}`)).toEqual([]);
    expect(await t.ds.query('SELECT * FROM rm_feedback WHERE feedback_id = $1', [fb.body.data.feedback_id])).toEqual([]);
  });

  it('rebuilding the outbox reproduces the same records and states and sends nothing again', async () => {
    await t.webhooks.dispatcher.stop();
    const snapshot = async () => t.ds.query('SELECT t::text AS r FROM rm_webhook_deliveries t ORDER BY delivery_id');
    const before = await snapshot();
    const sent = receiver.received.length;
    const attempts = (await t.store.readAll()).filter((e) => e.type === 'DeliveryAttempted').length;
    expect(before.length).toBeGreaterThan(5);
    await t.runner.rebuild('webhook-outbox');
    expect(await snapshot()).toEqual(before);
    expect((await verifyProjection(t.runner, t.ds, t.config.databaseUrl, 'webhook-outbox')).equal).toBe(true);
    expect(await t.webhooks.dispatcher.claim(100)).toEqual([]); // nothing is due again
    t.webhooks.dispatcher.start();
    await ingest('after-rebuild'); // the dispatcher runs: only the new event is sent
    await waitForRecord('after-rebuild', ['delivered']);
    expect(receiver.received.length).toBe(sent + 1);
    expect((await t.store.readAll()).filter((e) => e.type === 'DeliveryAttempted').length).toBe(attempts + 1);
  });
});
