import type { PermissionCapture } from '@crs/connectors/provider.port';
import * as tokens from '@crs/platform/tokens';
import { connectorConformance, type ConformanceSource } from './conformance';
import { FakeProvider } from './fake-provider';

/**
 * The conformance suite against the scriptable fake provider: every case runs, rate limits and permissions included.
 * Twice: a source that reports a permission-only change as an upsert with the same content hash, and one whose feed
 * says only the permission changed (a `permission` event, as a drive's changes feed or a wiki's restriction sweep).
 */
function fakeSource(permissionEvents: boolean): () => ConformanceSource {
  return () => {
    const fake = new FakeProvider();
    fake.permissionEvents = permissionEvents;
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
  };
}

connectorConformance('fake provider', fakeSource(false));
connectorConformance('fake provider reporting permission events', fakeSource(true));
