import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { HydraDBClient } from '@hydradb/sdk';
import { configFromEnv } from '@crs/config';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The SDK's webhook methods and its transport (retries honouring Retry-After, bodiless POST/DELETE) against the
 * service. Webhook management answers directly (our spec), so the SDK's `res.data` is undefined and fields sit at
 * the top of the parsed body with their wire names (snake_case): documented in docs/sdk.md.
 */
describe('@hydradb/sdk webhooks and transport', () => {
  let t: TestApp;
  let client: HydraDBClient;
  let receiver: Server;
  let receiverUrl: string;
  const received: { headers: Record<string, any>; body: string }[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as any).port}/hook`;
    const webhooks = { ...configFromEnv({}, 'postgres://unused').webhooks, allowLoopback: true, pollMs: 25, leaseMs: 3000, timeoutMs: 3000 };
    t = await startTestApp('sdkhooks', { webhooks, feedback: { rateLimit: 2, rateWindowSeconds: 2 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as any).port}`;
    client = new HydraDBClient({ baseUrl, token: t.key, maxRetries: 2, timeoutInSeconds: 30 });
    await t.createDatabase('hooks');
  });
  afterAll(async () => {
    await t.close();
    await new Promise((r) => receiver.close(r));
  });

  it('register, get, test, list and get deliveries, retry (409 when delivered), delete', async () => {
    const reg: any = await client.webhooks.register({ url: receiverUrl, eventTypes: ['indexing.status_changed'], signingSecret: 'a-very-long-signing-secret' } as any);
    expect(reg).toMatchObject({ registered: true, url: receiverUrl, event_types: ['indexing.status_changed'], signing_secret_configured: true });
    const got: any = await client.webhooks.get();
    expect(got).toMatchObject({ registered: true, url: receiverUrl, signing_secret_configured: true });
    expect(JSON.stringify(got)).not.toContain('a-very-long-signing-secret');

    const test: any = await client.webhooks.test();
    expect(test).toMatchObject({ delivered: true, status_code: 200 });
    const synthetic = JSON.parse(received.find((r) => JSON.parse(r.body).test)!.body);
    expect(synthetic).toMatchObject({ id: 'test_document', status: 'completed', test: true, delivery_id: expect.stringMatching(/^test_/) });

    await client.context.ingest({ type: 'memory', tenantId: 'hooks', memories: JSON.stringify([{ id: 'h1', text: 'hello webhooks' }]) });
    let list: any;
    for (let i = 0; i < 300; i++) {
      list = await client.webhooks.listDeliveries({ status: 'delivered' } as any);
      if (list.count === 1) break;
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(list.deliveries[0]).toMatchObject({ doc_id: 'h1', status: 'delivered', indexing_status: 'completed', attempts: 1 });
    const real = received.find((r) => JSON.parse(r.body).id === 'h1')!;
    const expected = `sha256=${createHmac('sha256', 'a-very-long-signing-secret').update(real.body).digest('hex')}`;
    expect(real.headers['x-service-signature']).toBe(expected);
    const one: any = await client.webhooks.getDelivery({ deliveryId: list.deliveries[0].delivery_id } as any);
    expect(one).toMatchObject({ delivery_id: list.deliveries[0].delivery_id, doc_id: 'h1' });
    await expect(client.webhooks.retryDelivery({ deliveryId: list.deliveries[0].delivery_id } as any)).rejects.toMatchObject({ statusCode: 409 });
    const del: any = await client.webhooks.delete();
    expect(del).toMatchObject({ deleted: true });
    expect(((await client.webhooks.get()) as any).registered).toBe(false);
  });

  it('retries a 429 after the Retry-After the service names, and then succeeds', async () => {
    const q = await t.request('POST', '/query', { body: { database: 'hooks', query: 'hello' } });
    const requestId = q.body.meta.request_id;
    const send = () => client.fetch('/feedback', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ request_id: requestId, feedback: 'good', rating: 'positive' }) });
    // The limiter counts in fixed 2-second windows aligned to the epoch: start just after a window opens, so the
    // three sends share one window whatever the machine's speed (else the third may open the next one, no 429).
    await new Promise((r) => setTimeout(r, 2000 - (Date.now() % 2000) + 20));
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await send()).status);
    // Two fit the window; the third got a 429 with Retry-After, which the SDK honoured before retrying.
    expect(statuses).toEqual([201, 201, 201]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const rows = await t.ds.query(`SELECT count(*)::int AS n FROM rm_feedback`);
    expect(rows[0].n).toBe(3);
  });
});
