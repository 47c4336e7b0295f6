import type { PermissionCapture } from '@crs/connectors/provider.port';
import * as tokens from '@crs/platform/tokens';
import { connectorConformance } from './conformance';
import { FakeProvider } from './fake-provider';

/** The conformance suite against the scriptable fake provider: every case runs, rate limits and permissions included. */
connectorConformance('fake provider', () => {
  const fake = new FakeProvider();
  const resourceId = 'folder-1';
  return {
    providerId: fake.description.id,
    resource: { resourceId, resourceType: 'folder', name: 'Folder one' },
    credentials: { token: 'good-token' },
    async setUp(t) {
      t.get(tokens.CONNECTOR_PROVIDERS).register(fake);
    },
    async tearDown() {},
    async put(id, text) {
      fake.put(resourceId, id, text);
    },
    async remove(id) {
      fake.remove(resourceId, id);
    },
    async revokeCredentials() {
      fake.revoke('good-token');
    },
    async restoreCredentials() {
      fake.accept('good-token');
    },
    async setPermission(id: string, permission: PermissionCapture) {
      fake.setPermission(resourceId, id, permission);
    },
    rateLimit(retryAt: Date, afterCalls: number) {
      fake.rateLimit(retryAt, afterCalls);
    },
  };
});
