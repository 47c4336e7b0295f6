import { randomUUID } from 'node:crypto';
import { decideConnector, type ConnectorCommand, type ConnectorState } from '@crs/domain/connectors/connector.decider';
import type { ConnectorStreamEvent, ResourceEvent } from '@crs/domain/connectors/connector.events';
import { decideResource, type ResourceCommand, type ResourceState } from '@crs/domain/connectors/resource.decider';
import { streams } from '@crs/domain/streams';
import { ConfluenceProvider } from '@crs/connectors/providers/confluence/confluence.provider';
import { CONNECTOR_FOLD, RESOURCE_FOLD } from '@crs/connector-sync/connector-streams';
import { PruneHolds } from '@crs/connector-sync/prune-holds';
import { ResourceSync } from '@crs/connector-sync/resource-sync';
import { syncedItemId } from '@crs/connector-sync/synced-documents';
import { handleCommand } from '@crs/eventstore/command-handling';
import { configFromEnv } from '@crs/config';
import * as tokens from '@crs/platform/tokens';
import { ConfluenceFake } from '../fakes/confluence/confluence-fake';
import type { RunningFake } from '../fakes/loopback-server';
import { waitForStatus } from '../support/ingest';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * What people retrieve from a synced Confluence space, through `POST /query` with their `acl`: the sync engine runs
 * the Confluence provider against the fake, and each query is a space member, a member outside a page's restriction,
 * or someone outside the space.
 */
describe('Confluence permissions, retrieved through POST /query', () => {
  const ORG = 'default';
  const SCOPE = 'wiki-1';
  const connectorId = randomUUID();
  const credentialsId = randomUUID();
  let t: TestApp;
  let fake: ConfluenceFake;
  let server: RunningFake;
  let engine: ResourceSync;
  let databaseId: string;
  let now = Date.parse('2031-01-01T00:00:00Z');
  const pages: Record<string, string> = {};
  const ctx = () => ({ orgId: ORG, actor: 'test', now: new Date(now) });
  const itemOf = (page: string) => syncedItemId('confluence', SCOPE, 'ENG', pages[page]);

  async function settle(): Promise<void> {
    await t.runner.waitFor(await t.store.headPosition(), undefined, 20_000);
  }

  async function sync(): Promise<void> {
    now += 3600_000;
    const result = await engine.run({ orgId: ORG, connectorId, resourceId: 'ENG', trigger: 'manual' });
    expect(result).toMatchObject({ kind: 'completed' });
    await settle();
    await waitForStatus(t, 'wiki', Object.keys(pages).map(itemOf), ['graph_creation', 'completed'], 60_000);
  }

  /** The pages (by name) a person retrieves with a query that matches every page. */
  async function retrieves(email: string): Promise<string[]> {
    const res = await t.request('POST', '/query', { body: { database: 'wiki', query: 'heliotrope ledger', query_by: 'text', query_apps: true, max_results: 50, acl: [email] } });
    expect(res.status).toBe(200);
    const found = new Set(res.body.data.chunks.map((c: { id: string }) => c.id));
    return Object.keys(pages).filter((name) => found.has(itemOf(name))).sort();
  }

  async function contentOf(page: string): Promise<{ content_sha256: string; content_version: number }> {
    const [row] = await t.ds.query(`SELECT content_sha256, content_version FROM rm_items WHERE item_id = $1`, [itemOf(page)]);
    return row;
  }

  beforeAll(async () => {
    fake = new ConfluenceFake();
    fake.addUser({ accountId: 'acc-ada', displayName: 'Ada', email: 'ada@example.test' });
    fake.addUser({ accountId: 'acc-bob', displayName: 'Bob', email: 'bob@example.test' });
    fake.addUser({ accountId: 'acc-carl', displayName: 'Carl', email: 'carl@example.test' });
    fake.addGroup('grp-eng', 'engineering', ['acc-ada', 'acc-bob']);
    fake.addSpace('ENG', 'Engineering', { groups: ['grp-eng'] });
    // Last modified long before the newest page, so no crawl re-reads them: a change of their restriction reaches the
    // service through the restriction sweep only.
    pages.home = fake.addPage('ENG', 'Home', '<p>The heliotrope ledger: home.</p>', null, '2024-01-01T09:00:00.000Z');
    pages.secret = fake.addPage('ENG', 'Salaries', '<p>The heliotrope ledger: salaries.</p>', pages.home, '2024-01-01T09:01:00.000Z');
    pages.child = fake.addPage('ENG', 'Salary bands', '<p>The heliotrope ledger: bands.</p>', pages.secret, '2024-01-01T09:02:00.000Z');
    pages.news = fake.addPage('ENG', 'News', '<p>The heliotrope ledger: news.</p>', pages.home);
    fake.restrictRead(pages.secret, ['acc-ada'], []);
    server = await fake.start();

    t = await startTestApp('conn-wiki-acl', { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true } });
    await t.get(tokens.CONNECTOR_SCHEDULER).stop();
    await t.createDatabase('wiki');
    [{ id: databaseId }] = await t.ds.query(`SELECT id FROM rm_databases WHERE name = 'wiki'`);
    await t.get(tokens.CONNECTOR_CREDENTIALS).put(ORG, credentialsId, { base_url: `${server.url}/wiki`, email: fake.credentials.email, api_token: fake.credentials.apiToken });
    engine = new ResourceSync({
      sql: t.ds,
      store: t.store,
      blobs: t.blobs,
      providers: t.get(tokens.CONNECTOR_PROVIDERS),
      credentials: t.get(tokens.CONNECTOR_CREDENTIALS),
      holds: new PruneHolds(t.ds),
      pipeline: t.pipeline,
      log: { info: () => undefined, error: () => undefined },
      clock: () => new Date(now),
      settings: { leaseMs: 60_000, massDeletionThreshold: 0.5 },
    });
    t.get(tokens.CONNECTOR_PROVIDERS).register(new ConfluenceProvider({ allowPrivateNetworks: true, retryDelaysMs: [10] }));
    await handleCommand<ConnectorState, ConnectorStreamEvent, ConnectorCommand>(t.store, streams.connector(connectorId), CONNECTOR_FOLD, decideConnector, { type: 'CreateConnector', connectorId, provider: 'confluence', databaseId, collection: 'default', credentialsId, providerAccountScope: SCOPE }, ctx());
    await handleCommand<ResourceState, ResourceEvent, ResourceCommand>(t.store, streams.connectorResource(connectorId, 'ENG'), RESOURCE_FOLD, decideResource, { type: 'ConfigureResource', connectorId, resourceId: 'ENG', resourceType: 'space', name: 'Engineering' }, ctx());
    await settle();
  }, 120_000);

  afterAll(async () => {
    await fake?.stop();
    await t?.close();
  });

  it('a restricted page and its child stay hidden from space members outside the restriction and from everyone outside the space', async () => {
    await sync();
    expect(await retrieves('ada@example.test')).toEqual(['child', 'home', 'news', 'secret']);
    expect(await retrieves('bob@example.test')).toEqual(['home', 'news']);
    expect(await retrieves('carl@example.test')).toEqual([]);
  });

  it('a space permission change applies on the next sync and not before', async () => {
    fake.setSpaceRead('ENG', { groups: ['grp-eng'], users: ['acc-carl'] });
    expect(await retrieves('carl@example.test')).toEqual([]);
    await sync();
    expect(await retrieves('carl@example.test')).toEqual(['home', 'news']);
  });

  it('a restriction-only change applies on the next sync and not before, with no new content version', async () => {
    const before = { secret: await contentOf('secret'), child: await contentOf('child') };
    fake.restrictRead(pages.secret, ['acc-ada', 'acc-bob'], []);
    expect(await retrieves('bob@example.test')).toEqual(['home', 'news']);
    await sync();
    expect(await retrieves('bob@example.test')).toEqual(['child', 'home', 'news', 'secret']);
    expect(await retrieves('carl@example.test')).toEqual(['home', 'news']);
    expect({ secret: (await contentOf('secret')).content_sha256, child: (await contentOf('child')).content_sha256 }).toEqual({ secret: before.secret.content_sha256, child: before.child.content_sha256 });
  });
});
