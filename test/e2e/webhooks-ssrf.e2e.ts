import { configFromEnv } from '@crs/config';
import { startTestApp, type TestApp } from '../support/test-app';
import { ingestMemories, waitForStatus } from '../support/ingest';

/**
 * The SSRF guard with WEBHOOK_ALLOW_LOOPBACK off (the default): hostile URLs are refused at registration,
 * and a name that later resolves to a private address is refused at delivery time, after DNS resolution.
 * DNS answers are simulated by replacing the guard's lookup, so nothing here leaves the machine.
 */
describe('webhook URL guard (SSRF)', () => {
  let t: TestApp;
  const dns = new Map<string, string[]>();

  beforeAll(async () => {
    const defaults = configFromEnv({}, 'postgres://unused').webhooks;
    expect(defaults.allowLoopback).toBe(false); // off unless WEBHOOK_ALLOW_LOOPBACK=true
    t = await startTestApp('webhookssrf', { webhooks: { ...defaults, retryScheduleMs: [40], pollMs: 25 } });
    t.webhooks.guard.lookup = async (host) => {
      const answer = dns.get(host);
      if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
  });
  afterAll(async () => {
    await t.close();
  });

  const register = (url: unknown) => t.request('POST', '/webhooks/indexing', { body: { url } });

  const BLOCKED: string[] = [
    'https://127.0.0.1/hook',
    'https://127.255.255.254/',
    'https://localhost/hook',
    'https://LOCALHOST./hook',
    'https://app.localhost/',
    'https://2130706433/', // decimal 127.0.0.1
    'https://0x7f.1/', // hex
    'https://0x7f000001/',
    'https://017700000001/', // octal
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://0/',
    'https://0.0.0.0/',
    'https://[::1]/',
    'https://[::]/',
    'https://[0:0:0:0:0:0:0:1]/',
    'https://[::ffff:127.0.0.1]/', // IPv4-mapped
    'https://[::ffff:7f00:1]/',
    'https://[0:0:0:0:0:ffff:7f00:1]/',
    'https://[::ffff:10.0.0.1]/',
    'https://[::ffff:8.8.8.8]/', // mapped even when public: never global unicast
    'https://[::127.0.0.1]/', // IPv4-compatible
    'https://[64:ff9b::7f00:1]/', // NAT64
    'https://[2002:7f00:1::1]/', // 6to4 embedding 127.0.0.1
    'https://[2001::1]/', // Teredo
    'https://[2001:db8::1]/', // documentation
    'https://[fe80::1]/', // link-local
    'https://[fc00::1]/', // unique-local
    'https://[fd12:3456:789a::1]/',
    'https://[ff02::1]/', // multicast
    'https://10.0.0.1/',
    'https://10.255.255.255/',
    'https://172.16.0.1/',
    'https://172.31.255.254/',
    'https://192.168.1.1/',
    'https://169.254.169.254/latest/meta-data/', // cloud metadata
    'https://100.64.0.1/', // carrier-grade NAT
    'https://100.127.255.254/',
    'https://192.0.0.8/',
    'https://192.0.2.10/',
    'https://198.18.0.1/',
    'https://198.51.100.7/',
    'https://203.0.113.9/',
    'https://224.0.0.1/', // multicast
    'https://239.255.255.250/',
    'https://240.0.0.1/', // reserved
    'https://255.255.255.255/', // broadcast
    'https://intranet/', // single label: local search domains
    'https://printer.local/',
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://router.home.arpa/',
    'https://resolves-private.example.com/', // DNS answer is private
    'https://resolves-mixed.example.com/', // one private answer is enough
    'https://resolves-loopback6.example.com/',
    'https://resolves-mapped.example.com/',
  ];
  const INVALID: string[] = [
    'http://127.0.0.1/hook', // http:// needs WEBHOOK_ALLOW_LOOPBACK (and then only to loopback)
    'http://2130706433/',
    'http://hooks.example.com/',
    'ftp://hooks.example.com/',
    'file:///etc/passwd',
    'gopher://hooks.example.com/',
    'https://user:pass@hooks.example.com/',
    'https://hooks.example.com@127.0.0.1/', // credentials, and really 127.0.0.1
    'not a url',
    '/relative/path',
    '',
    `https://hooks.example.com/${'a'.repeat(2100)}`,
  ];

  beforeEach(() => {
    dns.clear();
    dns.set('resolves-private.example.com', ['10.1.2.3']);
    dns.set('resolves-mixed.example.com', ['93.184.216.34', '192.168.0.10']);
    dns.set('resolves-loopback6.example.com', ['::1']);
    dns.set('resolves-mapped.example.com', ['::ffff:169.254.169.254']);
    dns.set('hooks.example.com', ['93.184.216.34']);
  });

  it.each(BLOCKED)('refuses %s as WEBHOOK_URL_BLOCKED', async (url) => {
    const res = await register(url);
    expect([url, res.status, res.body.error?.code]).toEqual([url, 400, 'WEBHOOK_URL_BLOCKED']);
    expect(res.body.error.message).toMatch(/public internet/);
  });

  it.each(INVALID)('refuses %s as WEBHOOK_URL_INVALID', async (url) => {
    const res = await register(url);
    expect([url, res.status, res.body.error?.code]).toEqual([url, 400, 'WEBHOOK_URL_INVALID']);
  });

  it('a refused URL registers nothing and appends nothing', async () => {
    expect((await t.request('GET', '/webhooks/indexing')).body.registered).toBe(false);
    expect((await t.store.readAll()).filter((e) => e.type === 'WebhookRegistered')).toEqual([]);
  });

  it.each([
    'https://93.184.216.34/hook',
    'https://[2606:4700:4700::1111]/hook',
    'https://hooks.example.com/indexing?team=a',
    'https://hooks.example.com:8443/x',
    'https://unresolvable-now.example.com/hook', // accepted now, checked again at every delivery
  ])('accepts the public URL %s', async (url) => {
    const res = await register(url);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ registered: true, url });
  });

  it('checks again at delivery time, after DNS: a name rebound to a private address is never contacted', async () => {
    dns.set('rebind.example.com', ['93.184.216.34']);
    expect((await register('https://rebind.example.com/hook')).status).toBe(200);
    dns.set('rebind.example.com', ['127.0.0.1']); // the attacker's DNS now answers loopback
    const test = await t.request('POST', '/webhooks/indexing/test');
    expect(test.body).toMatchObject({ delivered: false, status_code: null });
    expect(test.body.message).toMatch(/URL_BLOCKED/);

    await t.createDatabase('ssrf');
    await ingestMemories(t, 'ssrf', [{ id: 'victim', text: 'A memory whose webhook must not reach localhost.' }]);
    await waitForStatus(t, 'ssrf', ['victim']);
    const deadline = Date.now() + 20_000;
    let rec: any;
    while (Date.now() < deadline) {
      [rec] = (await t.request('GET', '/webhooks/indexing/deliveries')).body.deliveries;
      if (rec?.status === 'permanently_failed') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(rec).toMatchObject({ doc_id: 'victim', status: 'permanently_failed', attempts: 2, error_code: 'URL_BLOCKED', last_status_code: null });
    expect(rec.error_message).toMatch(/127\.0\.0\.1/);

    dns.delete('rebind.example.com'); // and a name that stops resolving is a DNS failure, not a connection
    const gone = await t.request('POST', '/webhooks/indexing/test');
    expect(gone.body.message).toMatch(/DNS_FAILED/);
  });
});
