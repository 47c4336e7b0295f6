import { startTestApp, type TestApp } from '../support/test-app';

describe('API conventions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('conventions');
  });
  afterAll(async () => {
    await t.close();
  });

  const expectEnvelopeError = (res: { body: any; headers: any }, code: string) => {
    expect(res.body).toMatchObject({ success: false, data: null, error: { code } });
    expect(typeof res.body.error.message).toBe('string');
    expect(res.body.meta.request_id).toBe(res.headers['x-request-id']);
    expect(res.body.meta.api_version).toBe('2.0.1');
  };

  it('401 UNAUTHORIZED for a missing, malformed, unknown or wrong-secret key', async () => {
    const [prefix] = t.key.split('.');
    for (const authorization of ['', 'Basic abc', 'Bearer nodot', `Bearer ${prefix}.wrong-secret-wrong-secret`, 'Bearer crs_000000000000.aaaaaaaaaaaaaaaaaaaa']) {
      const res = await t.request('GET', '/databases', { headers: { authorization } });
      expect(res.status).toBe(401);
      expectEnvelopeError(res, 'UNAUTHORIZED');
    }
  });

  it('checks the key before reading the body', async () => {
    const res = await t.request('POST', '/databases', { body: '{not json', headers: { authorization: '', 'content-type': 'application/json' } });
    expect(res.status).toBe(401);
  });

  it('serves API-Version 2 (and 2.x, and absent) and refuses other versions', async () => {
    for (const v of ['2', '2.0', '2.0.1', '']) {
      const res = await t.request('GET', '/databases', { headers: { 'api-version': v } });
      expect(res.status).toBe(200);
    }
    for (const v of ['1', '3', 'two', '2.0.1.5']) {
      const res = await t.request('GET', '/databases', { headers: { 'api-version': v } });
      expect(res.status).toBe(400);
      expectEnvelopeError(res, 'UNSUPPORTED_API_VERSION');
    }
  });

  it('every response carries a fresh request id, in the header and in meta', async () => {
    const a = await t.request('GET', '/databases');
    const b = await t.request('GET', '/databases');
    expect(a.body.meta.request_id).toBe(a.headers['x-request-id']);
    expect(a.body.meta.request_id).not.toBe(b.body.meta.request_id);
  });

  it('unknown routes and unknown methods answer in the envelope', async () => {
    const res = await t.request('GET', '/nope');
    expect(res.status).toBe(404);
    expectEnvelopeError(res, 'ROUTE_NOT_FOUND');
  });

  it('a JSON body over the limit is 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await t.request('POST', '/databases', { body: JSON.stringify({ database: 'x', pad: 'a'.repeat(11 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expectEnvelopeError(res, 'PAYLOAD_TOO_LARGE');
  });

  it('validation errors on deprecated fields add detail; database and tenant_id must agree', async () => {
    const bad = await t.request('GET', '/databases/status?tenant_id=');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatchObject({ error_code: 'INVALID_INPUT', deprecated: true, deprecated_field: 'tenant_id', preferred_field: 'database', success: false });
    const clash = await t.request('GET', '/databases/status?database=a&tenant_id=b');
    expect(clash.status).toBe(400);
    expect(clash.body.detail.deprecated_field).toBe('tenant_id');
    const wrongType = await t.request('POST', '/databases', { body: { tenant_id: 5 } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.detail).toMatchObject({ deprecated_field: 'tenant_id', preferred_field: 'database' });
  });

  it('deprecated tenant_id works in JSON bodies with a notice and no change of status code', async () => {
    const res = await t.request('POST', '/databases', { body: { tenant_id: 'via-alias' } });
    expect(res.status).toBe(202);
    expect(res.body.meta.deprecation).toEqual([
      { deprecated: true, deprecated_field: 'tenant_id', deprecated_since: '2.0.1', message: expect.stringContaining('database'), preferred_field: 'database' },
    ]);
    const modern = await t.request('GET', '/databases/status?database=via-alias');
    expect(modern.status).toBe(200);
    expect(modern.body.meta.deprecation).toBeUndefined();
    expect(modern.body.meta.database).toBe('via-alias');
  });

  it('/health reports the version without a key; /ready checks Postgres and projection lag', async () => {
    const health = await t.request('GET', '/health', { headers: { authorization: '' } });
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', api_version: '2.0.1' });
    await t.runner.waitFor(await t.store.headPosition(), undefined, 5000);
    const ready = await t.request('GET', '/ready', { headers: { authorization: '' } });
    expect(ready.status).toBe(200);
    expect(ready.body.checks.postgres).toBe('ok');
    expect(ready.body.checks.projections.map((p: any) => p.name)).toEqual(expect.arrayContaining(['databases', 'database-lifecycle']));
  });

  it('/metrics exposes request latency histograms and projection lag, to a key holder only', async () => {
    await t.request('GET', '/databases');
    const anonymous = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED' } });
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.key}` } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/crs_http_request_duration_seconds_bucket\{[^}]*route="\/databases"[^}]*status="200"/);
    expect(res.body).toMatch(/crs_projection_lag_events\{projection="databases"\} \d+/);
    expect(res.body).toContain('crs_pipeline_queue_depth');
  });

  it('serves the OpenAPI document and Swagger UI at /docs', async () => {
    const json = await t.app.inject({ method: 'GET', url: '/docs-json' });
    expect(json.statusCode).toBe(200);
    const doc = json.json();
    expect(doc.info.version).toBe('2.0.1');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/databases', '/databases/status', '/tenants']));
    const ui = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(ui.statusCode).toBe(200);
    expect(ui.body).toContain('swagger');
  });
});
