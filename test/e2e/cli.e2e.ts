import { spawn } from 'node:child_process';
import { crs } from '../support/crs';
import { ingestMemories, waitForStatus } from '../support/ingest';
import { startTestApp, type TestApp } from '../support/test-app';

describe('crs CLI', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('cli');
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a key that works once, lists it without its secret, and revokes it', async () => {
    const created = await crs(t, 'keys', 'create', '--org', 'acme', '--databases', 'one,two');
    expect(created.code).toBe(0);
    const key = created.out[0];
    expect(key).toMatch(/^crs_[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/);
    const ok = await t.request('GET', '/databases', { headers: { authorization: `Bearer ${key}` } });
    expect(ok.status).toBe(200);

    const list = await crs(t, 'keys', 'list', '--org', 'acme');
    const prefix = key.split('.')[0];
    expect(list.out.join('\n')).toContain(prefix);
    expect(list.out.join('\n')).not.toContain(key.split('.')[1]);
    expect(JSON.parse(list.out[0]).databases).toEqual(['one', 'two']);

    expect((await crs(t, 'keys', 'revoke', prefix)).code).toBe(0);
    const after = await t.request('GET', '/databases', { headers: { authorization: `Bearer ${key}` } });
    expect(after.status).toBe(401);
    expect((await crs(t, 'keys', 'revoke', prefix)).code).toBe(1);
  });

  it('events read takes whole numbers for --from and --limit, and says so otherwise', async () => {
    await t.createDatabase('evread');
    for (const args of [['--limit', 'abc'], ['--limit', '-1'], ['--limit', '2.5'], ['--from', 'abc'], ['--from', '-5']]) {
      const r = await crs(t, 'events', 'read', ...args);
      expect([args.join(' '), r.code, r.out]).toEqual([args.join(' '), 1, []]);
      expect(r.err.join('\n')).toMatch(/must be a whole number/);
    }
    const two = await crs(t, 'events', 'read', '--limit', '2');
    expect({ code: two.code, lines: two.out.length, err: two.err }).toEqual({ code: 0, lines: 2, err: [] });
  });

  it('--databases must name databases: an empty value (an unset shell variable) or a bad name makes no key, not an org-wide one', async () => {
    const before = (await crs(t, 'keys', 'list', '--org', 'narrow')).out.length;
    for (const value of ['', ',', ' ', 'a b']) {
      const r = await crs(t, 'keys', 'create', '--org', 'narrow', '--databases', value);
      expect([value, r.code, r.out]).toEqual([value, 1, []]);
      expect(r.err.join('\n')).toMatch(/--databases/);
    }
    expect((await crs(t, 'keys', 'list', '--org', 'narrow')).out.length).toBe(before);
  });

  it('writes its whole output into a pipe before exiting (the built command, as an auditor runs it)', async () => {
    await t.createDatabase('piped');
    const memories = Array.from({ length: 300 }, (_, i) => ({ id: `p${i}`, text: `Piped memory ${i} about the long log an auditor reads through jq. `.repeat(4) }));
    await ingestMemories(t, 'piped', memories);
    for (let s = 0; s < memories.length; s += 100) await waitForStatus(t, 'piped', memories.slice(s, s + 100).map((m) => m.id));
    const events = (await t.store.readAll()).length;
    const child = spawn(process.execPath, ['dist/apps/cli/src/main.js', 'events', 'read'], { env: { ...process.env, DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.config.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    // A slow reader (jq, ssh): the pipe fills and the command's writes wait in its memory for a while.
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), 3000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    const lines = out.split('\n').filter(Boolean);
    expect(out.length).toBeGreaterThan(256 * 1024); // well past a pipe's buffer
    expect(lines.length).toBeGreaterThanOrEqual(events);
    for (const line of lines) JSON.parse(line); // none cut short
  });

  it('stores only a hash of each secret', async () => {
    const { out } = await crs(t, 'keys', 'create', '--org', 'hashcheck');
    const secret = out[0].split('.')[1];
    const rows = await t.ds.query(`SELECT * FROM api_keys WHERE org_id = 'hashcheck'`);
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it('reads the event log as NDJSON, filtered by database', async () => {
    await t.createDatabase('cli-a');
    await t.createDatabase('cli-b');
    const all = await crs(t, 'events', 'read');
    const events = all.out.map((l) => JSON.parse(l));
    expect(events.length).toBeGreaterThan(5);
    expect(events.every((e, i) => i === 0 || e.position > events[i - 1].position)).toBe(true);
    const onlyA = (await crs(t, 'events', 'read', '--database', 'cli-a')).out.map((l) => JSON.parse(l));
    expect(onlyA.length).toBeGreaterThanOrEqual(5); // created + 4 components
    const a = await t.directory.find('default', 'cli-a');
    expect(onlyA.every((e) => e.data.databaseId === a!.id)).toBe(true);
    const from = (await crs(t, 'events', 'read', '--from', String(events[2].position), '--limit', '2')).out.map((l) => JSON.parse(l));
    expect(from.map((e) => e.position)).toEqual([events[3].position, events[4].position]);
  });

  it('reports projection status, rebuilds and verifies', async () => {
    const status = await crs(t, 'projections', 'status');
    expect(status.out.join('\n')).toMatch(/databases\s+read-model\s+position\s+\d+/);
    const rebuild = await crs(t, 'projections', 'rebuild', 'all');
    expect(rebuild.code).toBe(0);
    expect(rebuild.out[0]).toMatch(/^databases: rebuilt from \d+ events/);
    const verify = await crs(t, 'projections', 'verify', 'all');
    expect(verify.code).toBe(0);
    expect(verify.out[0]).toMatch(/^databases: equal at position \d+/);
  });

  it('verify reports the first difference when the live read model was tampered with', async () => {
    await t.createDatabase('tamper');
    await t.ds.query(`UPDATE rm_databases SET status = 'broken' WHERE name = 'tamper'`);
    const verify = await crs(t, 'projections', 'verify', 'databases');
    expect(verify.code).toBe(1);
    expect(verify.out[0]).toMatch(/DIFFERENT.*rm_databases/s);
    expect(verify.out[0]).toContain('broken');
    await crs(t, 'projections', 'rebuild', 'databases');
    expect((await crs(t, 'projections', 'verify', 'databases')).code).toBe(0);
  });

  it('fails clearly on an unknown command', async () => {
    const r = await crs(t, 'frobnicate');
    expect(r.code).not.toBe(0);
    expect(r.err.join('\n')).toMatch(/unknown command/);
  });
});
