import { runCli } from '@crs/cli/cli';
import { startTestApp, type TestApp } from '../support/test-app';
import { postMultipart, waitForStatus } from '../support/ingest';

const ids = (res: any) => res.body.data.chunks.map((c: any) => c.id).sort();

describe('access control through HTTP (rules 1-14 that apply without connectors)', () => {
  let t: TestApp;
  const docs: Record<string, unknown> = {
    open: undefined, // no acl: unrestricted
    pub: ['__public__', 'ann@corp.io'],
    priv: [],
    nullacl: null,
    ann: ['ANN@corp.io '],
    corp: ['domain:corp.io'],
    eng: ['group:slack:eng'],
    mixed: ['__private__', 'dan@corp.io'],
  };
  const query = (acl?: unknown[], extra: Record<string, unknown> = {}) => t.request('POST', '/query', { body: { database: 'acl', query: 'quarterly planning notes', max_results: 50, ...(acl ? { acl } : {}), ...extra } });

  beforeAll(async () => {
    t = await startTestApp('acl');
    await t.createDatabase('acl', { metadata_schema: [{ name: 'team', type: 'string' }] });
    const items = Object.entries(docs).map(([id, acl]) => ({ id, content: { text: `Quarterly planning notes, copy ${id}.` }, metadata: { team: 'x' }, ...(acl === undefined ? {} : { acl }) }));
    const res = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'acl', app_knowledge: JSON.stringify(items) });
    expect(res.status).toBe(200);
    await waitForStatus(t, 'acl', Object.keys(docs));
  });
  afterAll(async () => {
    await t.close();
  });

  it('rule 1, 3, 4: stored forms (lowercased, trimmed, deduplicated; [] and null stored as __private__; __private__ beside real dropped)', async () => {
    const rows = await t.ds.query(`SELECT item_id, acl FROM rm_items ORDER BY item_id`);
    const acl = Object.fromEntries(rows.map((r: any) => [r.item_id, r.acl]));
    expect(acl).toEqual({
      open: null,
      pub: ['__public__'],
      priv: ['__private__'],
      nullacl: ['__private__'],
      ann: ['user_email:ann@corp.io'],
      corp: ['domain:corp.io'],
      eng: ['group:slack:eng'],
      mixed: ['user_email:dan@corp.io'],
    });
  });

  it('rule 6/8: no acl and ["*"] mean no filtering', async () => {
    expect(ids(await query())).toEqual(Object.keys(docs).sort());
    expect(ids(await query(['*']))).toEqual(Object.keys(docs).sort());
  });

  it('rule 7: the caller sees unrestricted, public and matching documents; domain derived from the email', async () => {
    expect(ids(await query(['ann@corp.io']))).toEqual(['ann', 'corp', 'open', 'pub']);
    expect(ids(await query(['user_email:dan@corp.io']))).toEqual(['corp', 'mixed', 'open', 'pub']);
    expect(ids(await query(['eve@else.org']))).toEqual(['open', 'pub']);
  });

  it('rule 8: ["__private__"] returns public and unrestricted only', async () => {
    expect(ids(await query(['__private__']))).toEqual(['open', 'pub']);
  });

  it('groups are not derived from email: the query must declare the group', async () => {
    expect(ids(await query(['ann@corp.io']))).not.toContain('eng');
    expect(ids(await query(['ann@corp.io', 'group:slack:eng']))).toContain('eng');
  });

  it('rule 9: an unrecognized entry matches only public content (a typo narrows, never widens)', async () => {
    expect(ids(await query(['ann@corp']))).toEqual(['open', 'pub']);
    expect(ids(await query(['ANN@CORP.IO']))).toEqual(['ann', 'corp', 'open', 'pub']);
  });

  it('rule 10: metadata filters cannot widen visibility', async () => {
    expect(ids(await query(['eve@else.org'], { metadata_filters: { team: 'x' } }))).toEqual(['open', 'pub']);
  });

  it('enforced on /context/list and the legacy recall paths too', async () => {
    const list = await t.request('POST', '/context/list', { body: { database: 'acl', type: 'knowledge', acl: ['eve@else.org'], page_size: 100 } });
    expect(list.body.data.sources.map((s: any) => s.id).sort()).toEqual(['open', 'pub']);
    const recall = await t.request('POST', '/recall/full_recall', { body: { tenant_id: 'acl', query: 'quarterly planning notes', acl: ['eve@else.org'], max_results: 50 } });
    expect(recall.body.chunks.map((c: any) => c.id).sort()).toEqual(['open', 'pub']);
  });

  it('rule 5 and malformed principals: 400 and nothing stored', async () => {
    const tooMany = Array.from({ length: 1001 }, (_, i) => `u${i}@x.io`);
    const a = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'acl', app_knowledge: JSON.stringify({ id: 'big', content: { text: 'x' }, acl: tooMany }) });
    expect(a.status).toBe(400);
    const b = await postMultipart(t, '/context/ingest', { type: 'knowledge', database: 'acl', app_knowledge: JSON.stringify({ id: 'long', content: { text: 'x' }, acl: [`${'a'.repeat(250)}@x.io`] }) });
    expect(b.status).toBe(400);
    const c = await t.request('PATCH', '/context/ann/metadata', { body: { database: 'acl', acl: ['not-a-principal'] } });
    expect(c.status).toBe(400);
    const st = await t.request('GET', '/context/status?database=acl&ids=big&ids=long');
    expect(st.body.data.statuses.map((s: any) => s.indexing_status)).toEqual(['not_found', 'not_found']);
  });

  it('a revocation applies on the very next query, every time (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      const grant = await t.request('PATCH', '/context/ann/metadata', { body: { database: 'acl', acl: ['ann@corp.io'] } });
      expect(grant.status).toBe(200);
      expect(ids(await query(['ann@corp.io']))).toContain('ann');
      const revoke = await t.request('PATCH', '/context/ann/metadata', { body: { database: 'acl', acl: round % 2 ? null : [] } });
      expect(revoke.status).toBe(200);
      expect(ids(await query(['ann@corp.io']))).not.toContain('ann');
    }
  });

  it('rule 13: to reopen, set ["__public__"]', async () => {
    await t.request('PATCH', '/context/priv/metadata', { body: { database: 'acl', acl: ['__public__'] } });
    expect(ids(await query(['eve@else.org']))).toContain('priv');
  });

  it('the audit answers from the log: every ACL change, and who could see it at a moment', async () => {
    const run = async (...args: string[]) => {
      const out: string[] = [];
      const code = await runCli(args, { out: (l) => out.push(l), err: () => undefined, env: { DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.config.dataDir }, progress: false });
      return { code, out };
    };
    const history = (await run('audit', 'acl', 'corp', '--database', 'acl')).out.map((l) => JSON.parse(l));
    expect(history[0]).toMatchObject({ event: 'ItemIngested', acl: ['domain:corp.io'], actor: expect.stringMatching(/^key:/), request_id: expect.any(String) });
    const before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await t.request('PATCH', '/context/corp/metadata', { body: { database: 'acl', acl: ['group:slack:eng'] } });
    const history2 = (await run('audit', 'acl', 'corp', '--database', 'acl')).out.map((l) => JSON.parse(l));
    expect(history2).toHaveLength(2);
    expect(history2[1]).toMatchObject({ event: 'AclChanged', acl: ['group:slack:eng'], position: expect.any(Number) });
    const then = JSON.parse((await run('audit', 'visible', 'corp', '--database', 'acl', '--principal', 'ann@corp.io', '--at', before)).out[0]);
    expect(then).toMatchObject({ visible: true, matched: 'domain:corp.io' });
    expect(then.rule).toMatch(/domain/);
    const now = JSON.parse((await run('audit', 'visible', 'corp', '--database', 'acl', '--principal', 'ann@corp.io')).out[0]);
    expect(now).toMatchObject({ visible: false });
    const again = JSON.parse((await run('audit', 'visible', 'corp', '--database', 'acl', '--principal', 'ann@corp.io', '--at', before)).out[0]);
    expect(again).toEqual(then);
    const never = JSON.parse((await run('audit', 'visible', 'corp', '--database', 'acl', '--principal', 'ann@corp.io', '--at', '2000-01-01T00:00:00Z')).out[0]);
    expect(never).toMatchObject({ visible: false, rule: 'the item did not exist at that time' });
    // The caller's principals as a set, like a query's acl: repeated or comma-separated, in any order.
    for (const principals of [['--principal', 'ann@corp.io', '--principal', 'group:slack:eng'], ['--principal', 'group:slack:eng', '--principal', 'ann@corp.io'], ['--principal', 'ann@corp.io,group:slack:eng']]) {
      const both = JSON.parse((await run('audit', 'visible', 'corp', '--database', 'acl', ...principals)).out[0]);
      expect([principals.join(' '), both.visible, both.principals]).toEqual([principals.join(' '), true, expect.arrayContaining(['ann@corp.io', 'group:slack:eng'])]);
    }
    // An item that is not in that collection is an error (not a definite "did not exist" answer with exit 0).
    const elsewhere = await run('audit', 'visible', 'corp', '--database', 'acl', '--collection', 'other', '--principal', 'ann@corp.io');
    expect([elsewhere.code, elsewhere.out]).toEqual([1, []]);
  });
});
