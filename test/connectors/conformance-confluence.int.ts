import type { PermissionCapture } from '@crs/connectors/provider.port';
import { ConfluenceProvider } from '@crs/connectors/providers/confluence/confluence.provider';
import * as tokens from '@crs/platform/tokens';
import { ConfluenceFake } from '../fakes/confluence/confluence-fake';
import type { RunningFake } from '../fakes/loopback-server';
import { connectorConformance } from './conformance';

/**
 * The conformance suite against the Confluence provider, reading the Confluence fake on 127.0.0.1: one space that
 * anonymous visitors may read (so a page's restriction alone decides its per-document permission), crawled two pages
 * a request so a sync has several checkpoints.
 */
connectorConformance('confluence provider', () => {
  const fake = new ConfluenceFake();
  let server: RunningFake;
  /** the conformance suite's document ids, which name the pages (item ids derive from them), in the order put */
  const pages = new Map<string, string>();
  const puts: string[] = [];
  const accountOf = (email: string) => {
    const accountId = `acc-${email}`;
    fake.addUser({ accountId, displayName: email.split('@')[0], email });
    return accountId;
  };
  return {
    providerId: 'confluence',
    resource: { resourceId: 'CONF', resourceType: 'space', name: 'Conformance', options: { page_size: 2 } },
    get credentials() {
      return { base_url: `${server.url}/wiki`, email: fake.credentials.email, api_token: fake.credentials.apiToken };
    },
    async setUp(t) {
      fake.addUser({ accountId: 'acc-author', displayName: 'Author', email: 'author@example.com' });
      fake.addSpace('CONF', 'Conformance', { anonymous: true });
      server = await fake.start();
      // The fake's clock moves 90 s an edit, so the default 5-minute overlap would make a crawl's first answers
      // re-read three earlier documents; the killed-sync and 429 cases count which answer holds the documents just
      // put, so the overlap here reaches back one edit.
      t.get(tokens.CONNECTOR_PROVIDERS).register(new ConfluenceProvider({ allowPrivateNetworks: true, retryDelaysMs: [10], overlapMs: 120_000 }));
    },
    async tearDown() {
      await fake.stop();
    },
    async put(id, text) {
      const page = pages.get(id);
      if (page) fake.editPage(page, `<p>${text}</p>`);
      else pages.set(id, fake.addPage('CONF', `Document ${id}`, `<p>${text}</p>`, null, undefined, id));
      puts.push(id);
    },
    async remove(id) {
      fake.deletePage(pages.get(id)!);
      pages.delete(id);
    },
    async revokeCredentials() {
      fake.suspendCredential();
    },
    async restoreCredentials() {
      fake.restoreCredential();
    },
    async setPermission(id: string, permission: PermissionCapture) {
      const acl = permission.status === 'captured' ? (permission.acl ?? []) : [];
      const users = acl.filter((p) => p.startsWith('user_email:')).map((p) => accountOf(p.slice('user_email:'.length)));
      fake.restrictRead(pages.get(id)!, users, []);
    },
    rateLimit(retryAt: Date) {
      // The suite expects the throttled sync to have committed the first two of the four documents it just put and
      // the resumed one the other two: the crawl request after the one that returned the second of them is throttled.
      const second = pages.get(puts[puts.length - 3])!;
      fake.throttleAfter((url, body) => url.includes('body.storage') && body.results.some((p) => p.id === second), retryAt);
    },
  };
});
