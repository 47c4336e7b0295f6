import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { AuthError, ConfigurationError, DocumentError, ResourceGoneError, ScopeError, TargetForbiddenError, TransientError } from '@crs/connectors/provider-errors';
import { ReadOnlySession } from '@crs/connectors/providers/postgres/postgres-session';
import { targetFromCredentials } from '@crs/connectors/providers/postgres/postgres-target';
import type { ProviderContext, ResourceConfig, SyncCursor, SyncedDocument, SyncEvent } from '@crs/connectors/provider.port';
import { PostgresProvider, PostgresProviderOptions } from '@crs/connectors/providers/postgres/postgres.provider';
import { reconcile } from '@crs/connectors/reconcile';
import { createTestDatabase } from '../support/test-database';

/**
 * The database provider against a real Postgres: a source database and a stand-in for the service's own database,
 * both created on the run's embedded server, read by a role that may only SELECT.
 */
const ROLE = `crs_reader_${randomBytes(3).toString('hex')}`;
const PASSWORD = 'reader-pass-1';

let ownUrl: string;
let sourceUrl: string;
let admin: Client;
let provider: PostgresProvider;

function urlFor(base: string, user: string, password: string, host?: string): string {
  const u = new URL(base);
  u.username = user;
  u.password = password;
  if (host) u.hostname = host;
  return u.toString();
}

const readerCtx = (password = PASSWORD): ProviderContext => ({ credentials: { connection_string: urlFor(sourceUrl, ROLE, password) } });
const table = (resourceId: string, options?: Record<string, unknown>): ResourceConfig => ({ resourceId, resourceType: 'table', name: resourceId, options });

async function sql(text: string, params: unknown[] = []) {
  return admin.query(text, params);
}

/** Five articles in a fresh table; updated_at one minute apart from 2024-01-01. */
async function articles(name: string): Promise<string> {
  await sql(`CREATE TABLE app.${name} (id int PRIMARY KEY, title text, body text, category text, score int, updated_at timestamptz)`);
  await sql(`INSERT INTO app.${name}
             SELECT i, 'Title ' || i, 'Body of article ' || i, CASE WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END, i * 10,
                    timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute'
               FROM generate_series(1, 5) i`);
  return `app.${name}`;
}

/**
 * What a caller keeps: the documents and the cursor, committed together at each checkpoint, so events after the last
 * checkpoint are thrown away when a sync stops early (as a crash would lose them).
 */
class Mirror {
  docs = new Map<string, SyncedDocument>();
  cursor: SyncCursor | null = null;

  constructor(
    private readonly p: PostgresProvider,
    private readonly ctx: ProviderContext,
    private readonly resource: ResourceConfig,
  ) {}

  private apply(events: SyncEvent[], changed: string[], failures: Array<{ id: string; error: Error }>) {
    for (const e of events) {
      if (e.kind === 'upsert') {
        if (this.docs.get(e.doc.id)?.contentHash !== e.doc.contentHash) changed.push(e.doc.id);
        this.docs.set(e.doc.id, e.doc);
      } else if (e.kind === 'delete') this.docs.delete(e.id);
      else if (e.kind === 'failure') failures.push({ id: e.id, error: e.error });
    }
  }

  async sync(opts: { stopAfterDocuments?: number; ctx?: ProviderContext; onCheckpoint?: (n: number) => Promise<void> } = {}) {
    const out = { upserts: [] as SyncedDocument[], changed: [] as string[], failures: [] as Array<{ id: string; error: Error }>, checkpoints: 0, lastEvent: undefined as SyncEvent | undefined };
    let pending: SyncEvent[] = [];
    let documents = 0;
    for await (const e of this.p.sync(opts.ctx ?? this.ctx, this.resource, this.cursor)) {
      out.lastEvent = e;
      if (e.kind === 'checkpoint') {
        this.apply(pending, out.changed, out.failures);
        pending = [];
        this.cursor = e.cursor;
        out.checkpoints++;
        await opts.onCheckpoint?.(out.checkpoints);
        continue;
      }
      if (e.kind === 'upsert') out.upserts.push(e.doc);
      pending.push(e);
      if (opts.stopAfterDocuments !== undefined && ++documents >= opts.stopAfterDocuments) break;
    }
    return out;
  }

  async reconcile() {
    const known = new Map([...this.docs].map(([id, d]) => [id, d.contentHash]));
    const found = await reconcile(known, this.p.listExistingIds(this.ctx, this.resource));
    const fetched: SyncEvent[] = [];
    if (found.changed.length > 0) for await (const e of this.p.fetchDocuments(this.ctx, this.resource, found.changed)) fetched.push(e);
    for (const id of found.gone) this.docs.delete(id);
    const changed: string[] = [];
    this.apply(fetched, changed, []);
    return { ...found, fetched };
  }
}

async function drain(events: AsyncIterable<SyncEvent>): Promise<SyncEvent[]> {
  const out: SyncEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

async function readerSessions(): Promise<number> {
  const r = await sql(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1`, [ROLE]);
  return r.rows[0].n;
}

beforeAll(async () => {
  ownUrl = await createTestDatabase('connector_own');
  sourceUrl = await createTestDatabase('connector_source');
  admin = new Client({ connectionString: sourceUrl });
  await admin.connect();
  await sql(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
  await sql(`CREATE SCHEMA app`);
  await sql(`CREATE SCHEMA hidden`);
  await sql(`GRANT USAGE ON SCHEMA app TO ${ROLE}`);
  await sql(`ALTER DEFAULT PRIVILEGES IN SCHEMA app GRANT SELECT ON TABLES TO ${ROLE}`);
  provider = new PostgresProvider({ ownDatabases: [ownUrl], allowPrivateNetworks: true, pageSize: 1000 });
});

afterAll(async () => {
  await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [ROLE]).catch(() => undefined);
  await sql(`DROP OWNED BY ${ROLE}`).catch(() => undefined);
  await sql(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => undefined);
  await admin.end();
});

describe('database provider: credentials and discovery', () => {
  it('validates a read-only role and warns about a superuser', async () => {
    const identity = await provider.validateCredentials(readerCtx());
    const u = new URL(sourceUrl);
    expect(identity.accountScope).toBe(`${u.hostname}:${u.port}${u.pathname}`);
    expect(identity.displayName.startsWith(`${ROLE}@`)).toBe(true);
    expect(identity.warnings).toEqual([]);
    const asAdmin = await provider.validateCredentials({ credentials: { connection_string: sourceUrl } });
    expect(asAdmin.warnings.join(' ')).toMatch(/superuser/);
  });

  it('refuses a wrong password with an AuthError, and a malformed connection string with a ConfigurationError', async () => {
    await expect(provider.validateCredentials(readerCtx('wrong'))).rejects.toBeInstanceOf(AuthError);
    await expect(provider.validateCredentials({ credentials: { connection_string: 'host=db dbname=x' } })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(provider.validateCredentials({ credentials: {} })).rejects.toBeInstanceOf(ConfigurationError);
  });

  it("refuses the service's own database under any name for its host, and accepts another database on the same server", async () => {
    const own = new URL(ownUrl);
    for (const host of ['127.0.0.1', 'localhost']) {
      const ctx = { credentials: { connection_string: urlFor(ownUrl, decodeURIComponent(own.username), decodeURIComponent(own.password), host) } };
      await expect(provider.validateCredentials(ctx)).rejects.toThrow(/this service's own database/);
      await expect(drain(provider.sync(ctx, table('public.anything'), null))).rejects.toBeInstanceOf(ConfigurationError);
      await expect(provider.discoverResources(ctx)).rejects.toBeInstanceOf(ConfigurationError);
    }
    await expect(provider.validateCredentials({ credentials: { connection_string: sourceUrl } })).resolves.toBeDefined();
  });

  it('without allowPrivateNetworks refuses a loopback target before connecting, and checks the address again when a session connects', async () => {
    const guarded = new PostgresProvider({ ownDatabases: [ownUrl] });
    for (const host of ['127.0.0.1', 'localhost']) {
      const ctx = { credentials: { connection_string: urlFor(sourceUrl, ROLE, PASSWORD, host) } };
      await expect(guarded.validateCredentials(ctx)).rejects.toBeInstanceOf(TargetForbiddenError);
      await expect(guarded.discoverResources(ctx)).rejects.toBeInstanceOf(TargetForbiddenError);
      await expect(drain(guarded.sync(ctx, table('app.anything'), null))).rejects.toBeInstanceOf(TargetForbiddenError);
    }
    // The connect-time check alone (a name that resolved to a public address at the first check and to loopback now).
    const target = targetFromCredentials(readerCtx().credentials);
    const settings = { statementTimeoutMs: 1000, connectTimeoutMs: 2000 };
    await expect(ReadOnlySession.open(target, { ...settings, publicOnly: true })).rejects.toBeInstanceOf(TargetForbiddenError);
    const open = await ReadOnlySession.open(target, { ...settings, publicOnly: false });
    await open.close();
  });

  it('discovers the tables and views the role may read, not system schemas nor what it may not read', async () => {
    await articles('disc_articles');
    await sql(`CREATE VIEW app.disc_titles AS SELECT id, title FROM app.disc_articles`);
    await sql(`CREATE TABLE hidden.disc_secret (id int PRIMARY KEY, s text)`);
    const found = await provider.discoverResources(readerCtx());
    const byId = new Map(found.map((r) => [r.resourceId, r]));
    expect(byId.get('app.disc_articles')).toMatchObject({
      resourceType: 'table',
      details: { schema: 'app', table: 'disc_articles', key: ['id'], update_column: 'updated_at', text_columns: ['title', 'body', 'category'] },
    });
    expect(byId.get('app.disc_titles')).toMatchObject({ resourceType: 'view', details: { key: [] } });
    expect(byId.has('hidden.disc_secret')).toBe(false);
    expect(found.some((r) => /^(pg_catalog|information_schema|pg_toast)\./.test(r.resourceId))).toBe(false);
  });
});

describe('database provider: syncing', () => {
  it('syncs a resource configured with only resource_id, resource_type and name, in pages with a checkpoint after each', async () => {
    const id = await articles('first_sync');
    const small = new PostgresProvider({ ownDatabases: [ownUrl], allowPrivateNetworks: true, pageSize: 2 });
    const mirror = new Mirror(small, readerCtx(), table(id));
    const out = await mirror.sync();
    expect(out.upserts.map((d) => d.id)).toEqual(['1', '2', '3', '4', '5']);
    // 2 + 2 + 1 rows: three pages, the last one short, each followed by a checkpoint.
    expect(out.checkpoints).toBe(3);
    expect(out.lastEvent?.kind).toBe('checkpoint');
    expect(out.upserts[1]).toMatchObject({
      id: '2',
      title: 'Title 2',
      content: { kind: 'text', text: 'title: Title 2\nbody: Body of article 2\ncategory: even' },
      updatedAt: '2024-01-01T00:02:00+00:00',
      filterableFields: { schema: 'app', table: 'first_sync' },
      metadata: { schema: 'app', table: 'first_sync', key: { id: '2' } },
    });
    expect(new Set(out.upserts.map((d) => d.contentHash)).size).toBe(5);
  });

  it('applies column settings: id, title, body and filterable columns', async () => {
    const id = await articles('mapped');
    const mirror = new Mirror(provider, readerCtx(), table(id, { title_column: 'category', body_columns: ['body'], filterable_columns: ['category', 'score'] }));
    const out = await mirror.sync();
    expect(out.upserts[0]).toMatchObject({ title: 'odd', content: { text: 'Body of article 1' }, filterableFields: { schema: 'app', table: 'mapped', category: 'odd', score: 10 } });
    await expect(drain(provider.sync(readerCtx(), table(id, { body_columns: ['nope'] }), null))).rejects.toThrow(/body_columns names column "nope"/);
    await expect(drain(provider.sync(readerCtx(), table(id, { colour: 'red' }), null))).rejects.toBeInstanceOf(ConfigurationError);
  });

  it('a second sync yields nothing for unchanged rows; a touched row comes back with the same content hash', async () => {
    const id = await articles('unchanged');
    const mirror = new Mirror(provider, readerCtx(), table(id));
    await mirror.sync();
    const again = await mirror.sync();
    expect(again.upserts).toEqual([]);
    expect(again.checkpoints).toBe(1);
    await sql(`UPDATE ${id} SET updated_at = now() WHERE id = 3`);
    const touched = await mirror.sync();
    expect(touched.upserts.map((d) => d.id)).toEqual(['3']);
    expect(touched.changed).toEqual([]);
  });

  it('an edit comes in the next sync with its new content', async () => {
    const id = await articles('edits');
    const mirror = new Mirror(provider, readerCtx(), table(id));
    await mirror.sync();
    const before = mirror.docs.get('4')!.contentHash;
    await sql(`UPDATE ${id} SET body = 'Rewritten', updated_at = now() WHERE id = 4`);
    const out = await mirror.sync();
    expect(out.changed).toEqual(['4']);
    expect(mirror.docs.get('4')!.content).toEqual({ kind: 'text', text: 'title: Title 4\nbody: Rewritten\ncategory: even' });
    expect(mirror.docs.get('4')!.contentHash).not.toBe(before);
  });

  it('a deleted row is found by pruning against the ids that still exist', async () => {
    const id = await articles('deletes');
    const mirror = new Mirror(provider, readerCtx(), table(id));
    await mirror.sync();
    await sql(`DELETE FROM ${id} WHERE id IN (2, 5)`);
    expect((await mirror.sync()).upserts).toEqual([]);
    const found = await mirror.reconcile();
    expect(found.gone.sort()).toEqual(['2', '5']);
    expect(found.changed).toEqual([]);
    expect([...mirror.docs.keys()].sort()).toEqual(['1', '3', '4']);
  });

  it('an update whose update column was set into the past is missed by the cursor and found by its content hash', async () => {
    const id = await articles('backdated');
    const mirror = new Mirror(provider, readerCtx(), table(id));
    await mirror.sync();
    await sql(`UPDATE ${id} SET body = 'Changed quietly', updated_at = '2001-01-01' WHERE id = 5`);
    expect((await mirror.sync()).upserts).toEqual([]);
    const found = await mirror.reconcile();
    expect(found.changed).toEqual(['5']);
    expect(found.fetched).toHaveLength(1);
    expect(mirror.docs.get('5')!.content).toEqual({ kind: 'text', text: 'title: Title 5\nbody: Changed quietly\ncategory: odd' });
    expect(mirror.docs.get('5')!.updatedAt).toBe('2001-01-01T00:00:00+00:00');
    // Once fetched, nothing differs any more.
    expect((await mirror.reconcile()).changed).toEqual([]);
  });

  it('rows whose update column is NULL are read on every sync, and an edit that leaves it NULL is seen', async () => {
    const id = await articles('nulls');
    await sql(`INSERT INTO ${id} VALUES (6, 'Undated', 'No time here', 'odd', 60, NULL), (7, 'Undated too', 'Nor here', 'odd', 70, NULL)`);
    const mirror = new Mirror(provider, readerCtx(), table(id));
    const first = await mirror.sync();
    expect(first.upserts.map((d) => d.id)).toEqual(['6', '7', '1', '2', '3', '4', '5']);
    expect(mirror.docs.get('6')!.updatedAt).toBeNull();
    const second = await mirror.sync();
    expect(second.upserts.map((d) => d.id)).toEqual(['6', '7']);
    expect(second.changed).toEqual([]);
    await sql(`UPDATE ${id} SET body = 'Still no time' WHERE id = 7`);
    const third = await mirror.sync();
    expect(third.changed).toEqual(['7']);
    expect(mirror.docs.get('7')!.content).toMatchObject({ text: expect.stringContaining('Still no time') });
  });

  it('a table without an update column is read whole on every sync', async () => {
    await sql(`CREATE TABLE app.no_clock (code text PRIMARY KEY, label text)`);
    await sql(`INSERT INTO app.no_clock VALUES ('a', 'Alpha'), ('b', 'Beta')`);
    const mirror = new Mirror(provider, readerCtx(), table('app.no_clock'));
    expect((await mirror.sync()).upserts.map((d) => d.id)).toEqual(['a', 'b']);
    await sql(`UPDATE app.no_clock SET label = 'Bravo' WHERE code = 'b'`);
    const second = await mirror.sync();
    expect(second.upserts.map((d) => d.id)).toEqual(['a', 'b']);
    expect(second.changed).toEqual(['b']);
  });

  it('quotes identifiers and gives composite keys a JSON id that fetching understands', async () => {
    await sql(`CREATE TABLE app."Odd ""Name""; DROP TABLE x" ("Region" text, "No." int, "Body Text" text, PRIMARY KEY ("Region", "No."))`);
    await sql(`INSERT INTO app."Odd ""Name""; DROP TABLE x" VALUES ('eu', 1, 'first'), ('eu', 2, 'second'), ('us', 1, 'third')`);
    const [resource] = (await provider.discoverResources(readerCtx())).filter((r) => r.resourceId.includes('Odd'));
    expect(resource.resourceId).toBe('app."Odd ""Name""; DROP TABLE x"');
    const mirror = new Mirror(provider, readerCtx(), table(resource.resourceId));
    const out = await mirror.sync();
    expect(out.upserts.map((d) => [d.id, d.content])).toEqual([
      ['["eu","1"]', { kind: 'text', text: 'first' }],
      ['["eu","2"]', { kind: 'text', text: 'second' }],
      ['["us","1"]', { kind: 'text', text: 'third' }],
    ]);
    const fetched = await drain(provider.fetchDocuments(readerCtx(), table(resource.resourceId), ['["us","1"]', '["us","9"]', 'not-an-id']));
    expect(fetched.map((e) => (e.kind === 'upsert' ? `upsert ${e.doc.id}` : `${e.kind} ${'id' in e ? e.id : ''}`))).toEqual(['upsert ["us","1"]', 'delete ["us","9"]', 'delete not-an-id']);
  });

  it('a row larger than the document limit is a failure event and the others sync', async () => {
    const id = await articles('too_large');
    await sql(`UPDATE ${id} SET body = repeat('x', 500) WHERE id = 3`);
    const strict = new PostgresProvider({ ownDatabases: [ownUrl], allowPrivateNetworks: true, maxDocumentBytes: 200 });
    const out = await new Mirror(strict, readerCtx(), table(id)).sync();
    expect(out.upserts.map((d) => d.id)).toEqual(['1', '2', '4', '5']);
    expect(out.failures.map((f) => f.id)).toEqual(['3']);
    expect(out.failures[0].error).toBeInstanceOf(DocumentError);
  });
});

describe('database provider: 100,000 rows, interruptions and failures', () => {
  const BIG = 100_000;

  beforeAll(async () => {
    // Three rows share each updated_at, so pages end inside a run of equal times and only the id tells them apart.
    await sql(`CREATE TABLE app.big (id bigint PRIMARY KEY, title text, body text, updated_at timestamptz NOT NULL)`);
    await sql(`INSERT INTO app.big
               SELECT i, 'Row ' || i, 'Generated body ' || md5(i::text), timestamptz '2024-01-01 00:00:00+00' + (i / 3) * interval '1 second'
                 FROM generate_series(1, ${BIG}) i`);
    // The index docs/connectors.md advises: each page is then a range scan of it, not a sort of the rest of the table.
    await sql(`CREATE INDEX big_keyset ON app.big (updated_at, id)`);
    await sql(`ANALYZE app.big`);
    await sql(`CREATE TABLE app.medium AS SELECT i AS id, 'Row ' || i AS body FROM generate_series(1, 2000) i`);
    await sql(`ALTER TABLE app.medium ADD PRIMARY KEY (id)`);
  });

  it('syncs every row of a 100,000-row table once, in pages of 1000', async () => {
    const mirror = new Mirror(provider, readerCtx(), table('app.big'));
    const started = performance.now();
    const out = await mirror.sync();
    const syncMs = performance.now() - started;
    expect(out.upserts).toHaveLength(BIG);
    expect(mirror.docs.size).toBe(BIG);
    expect(out.checkpoints).toBe(BIG / 1000 + 1);
    const listStarted = performance.now();
    const found = await mirror.reconcile();
    const listMs = performance.now() - listStarted;
    // The listing's hashes are the synced documents' hashes: nothing looks changed, nothing gone.
    expect(found).toMatchObject({ changed: [], gone: [] });
    console.log(`database provider: ${BIG} rows synced in ${Math.round(syncMs)} ms (${out.checkpoints} checkpoints); ids and hashes listed and compared in ${Math.round(listMs)} ms`);
  });

  it('resumes after a sync stopped in the middle of a page, with no row lost or repeated', async () => {
    const mirror = new Mirror(provider, readerCtx(), table('app.big'));
    const committed = new Map<string, number>();
    const count = (docs: Map<string, SyncedDocument>) => {
      for (const id of docs.keys()) committed.set(id, (committed.get(id) ?? 0) + 1);
      docs.clear();
    };
    // Stopped 500 rows into the 26th page: 25 pages were committed, the rest of the events are thrown away.
    await mirror.sync({ stopAfterDocuments: 25_500 });
    expect(mirror.docs.size).toBe(25_000);
    count(mirror.docs);
    // The stopped sync closed its connection.
    await new Promise((r) => setTimeout(r, 200));
    expect(await readerSessions()).toBe(0);
    await mirror.sync();
    count(mirror.docs);
    expect(committed.size).toBe(BIG);
    expect([...committed.values()].every((n) => n === 1)).toBe(true);
  });

  it('an abort signal stops the sync at the next page with its reason', async () => {
    const controller = new AbortController();
    const events: SyncEvent[] = [];
    const run = (async () => {
      for await (const e of provider.sync({ ...readerCtx(), signal: controller.signal }, table('app.big'), null)) {
        events.push(e);
        if (e.kind === 'checkpoint') controller.abort(new Error('stopped by the scheduler'));
      }
    })();
    await expect(run).rejects.toThrow('stopped by the scheduler');
    expect(events.filter((e) => e.kind === 'checkpoint')).toHaveLength(1);
  });

  it('a password changed mid-sync, with the role sessions ended, fails the sync with an AuthError; the checkpoint survives', async () => {
    const resource = table('app.medium', { page_size: 100 });
    const mirror = new Mirror(provider, readerCtx(), resource);
    try {
      const failed = mirror.sync({
        onCheckpoint: async (n) => {
          if (n !== 3) return;
          await sql(`ALTER ROLE ${ROLE} PASSWORD 'reader-pass-2'`);
          await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [ROLE]);
        },
      });
      await expect(failed).rejects.toBeInstanceOf(AuthError);
      await expect(failed).rejects.toThrow(/refused the login/);
      expect(mirror.docs.size).toBe(300);
      // With the new password the sync resumes where it stopped.
      await mirror.sync({ ctx: readerCtx('reader-pass-2') });
      expect(mirror.docs.size).toBe(2000);
    } finally {
      await sql(`ALTER ROLE ${ROLE} PASSWORD '${PASSWORD}'`);
    }
  });

  it('a connection ended mid-sync is reopened and the sync completes', async () => {
    const mirror = new Mirror(provider, readerCtx(), table('app.medium', { page_size: 100 }));
    await mirror.sync({
      onCheckpoint: async (n) => {
        if (n === 5) await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [ROLE]);
      },
    });
    expect(mirror.docs.size).toBe(2000);
  });

  it('a table dropped mid-sync fails it with ResourceGone; one that never existed too', async () => {
    await sql(`CREATE TABLE app.doomed AS SELECT i AS id, 'x' || i AS body FROM generate_series(1, 300) i`);
    await sql(`ALTER TABLE app.doomed ADD PRIMARY KEY (id)`);
    const mirror = new Mirror(provider, readerCtx(), table('app.doomed', { page_size: 100 }));
    await expect(mirror.sync({ onCheckpoint: async (n) => void (n === 1 && (await sql(`DROP TABLE app.doomed`))) })).rejects.toBeInstanceOf(ResourceGoneError);
    await expect(drain(provider.sync(readerCtx(), table('app.never_was'), null))).rejects.toBeInstanceOf(ResourceGoneError);
  });

  it('a table the role may not read fails with a ScopeError', async () => {
    await sql(`CREATE TABLE app.restricted (id int PRIMARY KEY, s text)`);
    await sql(`REVOKE SELECT ON app.restricted FROM ${ROLE}`);
    await expect(drain(provider.sync(readerCtx(), table('app.restricted'), null))).rejects.toBeInstanceOf(ScopeError);
  });

  it('reads in read-only transactions: a view whose function writes fails and writes nothing', async () => {
    await sql(`CREATE TABLE app.write_log (at timestamptz)`);
    await sql(`CREATE FUNCTION app.log_read(i int) RETURNS int LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN INSERT INTO app.write_log VALUES (now()); RETURN i; END $$`);
    await sql(`CREATE VIEW app.writes_on_read AS SELECT app.log_read(id) AS id, body FROM app.medium`);
    const view: ResourceConfig = { resourceId: 'app.writes_on_read', resourceType: 'view', name: 'writes', options: { id_columns: ['id'] } };
    await expect(drain(provider.sync(readerCtx(), view, null))).rejects.toThrow(/only read/);
    expect((await sql(`SELECT count(*)::int AS n FROM app.write_log`)).rows[0].n).toBe(0);
    await expect(drain(provider.sync(readerCtx(), { ...view, options: undefined }, null))).rejects.toThrow(/set id_columns/);
  });

  it('a query past the statement timeout fails with a TransientError', async () => {
    await sql(`CREATE VIEW app.slow AS SELECT m.id, m.body FROM app.medium m, pg_sleep(2)`);
    const impatient = new PostgresProvider({ ownDatabases: [ownUrl], allowPrivateNetworks: true, statementTimeoutMs: 200 } satisfies PostgresProviderOptions);
    const view: ResourceConfig = { resourceId: 'app.slow', resourceType: 'view', name: 'slow', options: { id_columns: ['id'] } };
    await expect(drain(impatient.sync(readerCtx(), view, null))).rejects.toThrow(TransientError);
  });
});
