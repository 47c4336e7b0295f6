import { JiraProvider } from '@crs/connectors/providers/jira/jira.provider';
import type { PermissionCapture } from '@crs/connectors/provider.port';
import * as tokens from '@crs/platform/tokens';
import { JiraFake } from '../fakes/jira/jira-fake';
import type { RunningFake } from '../fakes/loopback-server';
import { connectorConformance } from './conformance';

/**
 * The conformance suite against the Jira provider, reading the Jira fake on 127.0.0.1 with jira.js. A document is an
 * issue of project CONF (the fake lets the test choose the issue id, which is the document id); a per-document
 * permission is a security level whose members are the permission's people; a rate limit is a 429 on a search.
 */
connectorConformance('jira provider', () => {
  const fake = new JiraFake();
  let server: RunningFake | undefined;
  let levels = 0;
  return {
    providerId: 'jira',
    resource: { resourceId: 'CONF', resourceType: 'project', name: 'Conformance', options: { page_size: 2 } },
    get credentials() {
      return { base_url: server!.url, email: fake.credentials.email, api_token: fake.credentials.apiToken };
    },
    async setUp(t) {
      fake.addUser({ accountId: 'acc-lead', displayName: 'Lead', emailAddress: 'lead@example.com' });
      fake.addProject('CONF', 'Conformance', [{ type: 'anyone' }]);
      server = await fake.start();
      t.get(tokens.CONNECTOR_PROVIDERS).register(new JiraProvider({ allowPrivateNetworks: true, retryDelaysMs: [10, 10] }));
    },
    async tearDown() {
      await fake.stop();
    },
    async put(id, text) {
      const key = fake.keyOf(id);
      if (key) fake.updateIssue(key, { description: text });
      else fake.addIssue('CONF', `Document ${id}`, { id, description: text, reporter: 'acc-lead' });
    },
    async remove(id) {
      fake.deleteIssue(fake.keyOf(id)!);
    },
    async revokeCredentials() {
      fake.refuseCredentials();
    },
    async restoreCredentials() {
      fake.acceptCredentials();
    },
    async setPermission(id: string, permission: PermissionCapture) {
      if (permission.status !== 'captured') throw new Error('a security level is a captured permission');
      const key = fake.keyOf(id)!;
      if (permission.acl === null) return fake.setSecurityLevel(key, null);
      const holders = permission.acl.map((principal) => {
        if (!principal.startsWith('user_email:')) throw new Error(`the fake's security levels list people by email, not ${principal}`);
        const email = principal.slice('user_email:'.length);
        fake.addUser({ accountId: `acc-${email}`, displayName: email, emailAddress: email });
        return { type: 'user' as const, value: `acc-${email}` };
      });
      const levelId = String(10100 + levels++);
      fake.addSecurityLevel('CONF', { id: levelId, name: `Level ${levelId}`, holders });
      fake.setSecurityLevel(key, levelId);
    },
    rateLimit(retryAt: Date) {
      // A Jira sync reads more than the permission scheme, the listing and one page (the account's time zone, the
      // security levels), so the throttle is placed on what the case means: the second page of issues, which is the
      // third search after the listing and the first page.
      fake.throttleMatching((url) => url.startsWith('/rest/api/3/search/jql'), 2, retryAt);
    },
  };
});
