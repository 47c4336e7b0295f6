import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PresignedUrls } from '@crs/api/context/presigned-urls';
import { ingestMemories, postMultipart, waitForStatus } from '../support/ingest';
import { startTestApp, type TestApp } from '../support/test-app';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', 'ingestion', name));

/**
 * GET /context/inspect?mode=url|both: a URL of the service itself that serves the item's content without an API key
 * until it expires, and no longer once the item, its content, its ACL or the asking key changes.
 */
describe('presigned content URLs', () => {
  let t: TestApp;
  let presigned: PresignedUrls;
  beforeAll(async () => {
    t = await startTestApp('presigned');
    presigned = t.app.get(PresignedUrls);
    await t.createDatabase('pre');
    await ingestMemories(t, 'pre', [
      { id: 'note', text: 'The vault code is 4-8-15-16.' },
      { id: 'shared', text: 'Opening hours: nine to five.' },
    ]);
    await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'pre', document_metadata: JSON.stringify([{ id: 'pdf', acl: ['ann@corp.io'] }]) }, [
      { filename: 'sample.pdf', contentType: 'application/pdf', content: fixture('sample.pdf') },
    ]);
    await waitForStatus(t, 'pre', ['note', 'shared', 'pdf']);
  });
  afterEach(() => {
    presigned.now = Date.now;
  });
  afterAll(async () => {
    await t.close();
  });

  /** An anonymous request (no API key, no API-Version), as a browser or a download tool sends it. */
  const fetchUrl = async (url: string) => {
    const u = new URL(url);
    const res = await t.app.inject({ method: 'GET', url: u.pathname + u.search });
    return { status: res.statusCode, headers: res.headers, raw: res.rawPayload, body: res.headers['content-type']?.toString().startsWith('application/json') ? res.json() : undefined };
  };
  const urlOf = async (id: string, extra = '', headers: Record<string, string> = {}) => {
    const res = await t.request('GET', `/context/inspect?database=pre&id=${id}&mode=url${extra}`, { headers });
    expect([res.status, typeof res.body.data?.presigned_url]).toEqual([200, 'string']);
    return res.body.data.presigned_url as string;
  };
  const refused = (res: { status: number; body?: any }) => [res.status, res.body?.error?.code];

  it('mode url and both return a URL of the service, with its expiry; it serves the bytes without an API key', async () => {
    const before = Math.floor(Date.now() / 1000);
    const url = await t.request('GET', '/context/inspect?database=pre&id=note&mode=url&expiry_seconds=120');
    expect(url.body.data).toMatchObject({ id: 'note', presigned_url: expect.stringMatching(/^http:\/\/localhost(:80)?\/context\/presigned\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/), content: null, content_base64: null });
    const expires = Date.parse(url.body.data.presigned_url_expires_at) / 1000;
    expect(expires - before).toBeGreaterThanOrEqual(120);
    expect(expires - before).toBeLessThanOrEqual(121);
    expect(url.body.meta.source_type).toBe('memory');

    const served = await fetchUrl(url.body.data.presigned_url);
    expect([served.status, served.raw.toString('utf8')]).toEqual([200, 'The vault code is 4-8-15-16.']);
    expect(served.headers).toMatchObject({ 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'private, no-store', 'x-content-type-options': 'nosniff', 'content-security-policy': "sandbox; default-src 'none'" });

    // Binary content, byte for byte; both gives the content inline and the URL.
    const both = await t.request('GET', '/context/inspect?database=pre&id=pdf&mode=both');
    expect(both.body.data.content_base64).toBe(fixture('sample.pdf').toString('base64'));
    const pdf = await fetchUrl(both.body.data.presigned_url);
    expect([pdf.status, pdf.headers['content-type'], pdf.headers['content-length'], Buffer.compare(pdf.raw, fixture('sample.pdf'))]).toEqual([200, 'application/pdf', String(statSync(join(__dirname, '..', 'fixtures', 'ingestion', 'sample.pdf')).size), 0]);
    expect(pdf.headers['content-disposition']).toBe("inline; filename*=UTF-8''sample.pdf");
    // Signed with a key made on first use under DATA_DIR, readable by the service's user only.
    expect(statSync(join(t.config.dataDir, 'presigned-url.key')).mode & 0o777).toBe(0o600);
    // mode content (the default) makes no URL.
    expect((await t.request('GET', '/context/inspect?database=pre&id=note')).body.data.presigned_url).toBeNull();
  });

  it('expiry_seconds is an integer from 1 to 86400 (default 3600); the URL answers 403 PRESIGNED_URL_EXPIRED once it is past', async () => {
    for (const bad of ['0', '86401', '1.5', 'soon', '-3']) {
      const res = await t.request('GET', `/context/inspect?database=pre&id=note&mode=url&expiry_seconds=${bad}`);
      expect([bad, res.status, res.body.error.code, res.body.error.message]).toEqual([bad, 400, 'INVALID_INPUT', 'expiry_seconds must be an integer from 1 to 86400']);
    }
    const dflt = await t.request('GET', '/context/inspect?database=pre&id=note&mode=url');
    expect(Date.parse(dflt.body.data.presigned_url_expires_at) - Date.now()).toBeGreaterThan(3_590_000);
    const max = await t.request('GET', '/context/inspect?database=pre&id=note&mode=url&expiry_seconds=86400');
    expect(max.status).toBe(200);

    const url = await urlOf('note', '&expiry_seconds=60');
    presigned.now = () => Date.now() + 59_000;
    expect((await fetchUrl(url)).status).toBe(200);
    presigned.now = () => Date.now() + 61_000;
    const expired = await fetchUrl(url);
    expect(refused(expired)).toEqual([403, 'PRESIGNED_URL_EXPIRED']);
    expect(expired.body).toMatchObject({ success: false, data: null, meta: { request_id: expect.any(String), api_version: '2.0.1' } });
  });

  it('an altered URL, or one signed with another key, is 403 PRESIGNED_URL_INVALID', async () => {
    const url = await urlOf('note');
    const [payload, signature] = url.slice(url.lastIndexOf('/') + 1).split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const forged = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 86_400 * 365 })).toString('base64url');
    const base = url.slice(0, url.lastIndexOf('/') + 1);
    expect(refused(await fetchUrl(`${base}${forged}.${signature}`))).toEqual([403, 'PRESIGNED_URL_INVALID']);
    const flipped = signature[0] === 'A' ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    expect(refused(await fetchUrl(`${base}${payload}.${flipped}`))).toEqual([403, 'PRESIGNED_URL_INVALID']);
    expect(refused(await fetchUrl(`${base}${payload}`))).toEqual([403, 'PRESIGNED_URL_INVALID']);
    expect(refused(await fetchUrl(`${base}garbage`))).toEqual([403, 'PRESIGNED_URL_INVALID']);
    // The same claims under another service's key.
    const other = new PresignedUrls({ ...t.config, presignedUrls: { key: Buffer.alloc(32, 7).toString('base64') } });
    expect(refused(await fetchUrl(other.url(claims, 'http://localhost')))).toEqual([403, 'PRESIGNED_URL_INVALID']);
    expect((await fetchUrl(url)).status).toBe(200);
  });

  it('an ACL change revokes it (403 PRESIGNED_URL_REVOKED); the same ACL sent again does not; a new URL works', async () => {
    const url = (await t.request('GET', '/context/inspect?database=pre&id=pdf&mode=url&acl=ann@corp.io')).body.data.presigned_url;
    expect((await fetchUrl(url)).status).toBe(200);
    expect((await t.request('PATCH', '/context/pdf/metadata?database=pre', { body: { acl: ['ann@corp.io'] } })).status).toBe(200);
    expect((await fetchUrl(url)).status).toBe(200);
    expect((await t.request('PATCH', '/context/pdf/metadata?database=pre', { body: { acl: ['bob@corp.io'] } })).status).toBe(200);
    expect(refused(await fetchUrl(url))).toEqual([403, 'PRESIGNED_URL_REVOKED']);
    // Ann can no longer ask for one; Bob can, and his works.
    expect((await t.request('GET', '/context/inspect?database=pre&id=pdf&mode=url&acl=ann@corp.io')).status).toBe(404);
    const bobs = (await t.request('GET', '/context/inspect?database=pre&id=pdf&mode=url&acl=bob@corp.io')).body.data.presigned_url;
    expect((await fetchUrl(bobs)).status).toBe(200);
  });

  it('new content revokes it; a deleted item answers 404 ITEM_NOT_FOUND', async () => {
    const url = await urlOf('shared');
    await ingestMemories(t, 'pre', [{ id: 'shared', text: 'Opening hours: eight to four.' }]);
    await waitForStatus(t, 'pre', ['shared']);
    expect(refused(await fetchUrl(url))).toEqual([403, 'PRESIGNED_URL_REVOKED']);
    const fresh = await urlOf('shared');
    expect((await fetchUrl(fresh)).raw.toString('utf8')).toBe('Opening hours: eight to four.');
    expect((await t.request('DELETE', '/context', { body: { database: 'pre', ids: ['shared'] } })).body.data.deleted_count).toBe(1);
    expect(refused(await fetchUrl(fresh))).toEqual([404, 'ITEM_NOT_FOUND']);
  });

  it('revoking the key that made it revokes it, and so does a key that no longer reaches the database', async () => {
    const { key, record } = await t.keys.create('default', { databases: ['pre'] });
    const url = await urlOf('note', '', { authorization: `Bearer ${key}` });
    expect((await fetchUrl(url)).status).toBe(200);
    await t.keys.revoke(record.prefix);
    expect(refused(await fetchUrl(url))).toEqual([403, 'PRESIGNED_URL_REVOKED']);
    // A key's reach is fixed when made; one limited to a database that is gone and made again does not reach the new one.
    const limited = await t.keys.create('default', { databases: ['pre'] });
    const other = await urlOf('note', '', { authorization: `Bearer ${limited.key}` });
    await t.ds.query(`UPDATE api_keys SET databases = ARRAY['elsewhere'] WHERE prefix = $1`, [limited.record.prefix]);
    expect(refused(await fetchUrl(other))).toEqual([403, 'PRESIGNED_URL_REVOKED']);
  });

  it('PUBLIC_URL sets the address URLs are made with', async () => {
    const behindProxy = new PresignedUrls({ ...t.config, presignedUrls: { publicUrl: 'https://crs.example.com' } });
    expect(behindProxy.url({ org: 'o', db: 'd', item: 'i', cv: 0, acl: 'a', key: 'k', exp: 1 }, 'http://10.0.0.5:8080')).toMatch(/^https:\/\/crs\.example\.com\/context\/presigned\//);
    expect(() => new PresignedUrls({ ...t.config, presignedUrls: { publicUrl: 'ftp://x' } })).toThrow(/PUBLIC_URL/);
    expect(() => new PresignedUrls({ ...t.config, presignedUrls: { key: 'short' } })).toThrow(/PRESIGNED_URL_KEY must be 32 bytes/);
  });
});
