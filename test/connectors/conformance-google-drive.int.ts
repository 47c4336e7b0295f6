import type { PermissionCapture } from '@crs/connectors/provider.port';
import { GoogleDriveProvider } from '@crs/connectors/providers/google-drive/google-drive.provider';
import * as tokens from '@crs/platform/tokens';
import { DriveFake, type DrivePermission } from '../fakes/gdrive/gdrive-fake';
import { connectorConformance } from './conformance';

/**
 * The conformance suite against the Google Drive provider, reading a folder of the Drive fake on 127.0.0.1 with a
 * service account key (exchanged at the fake's token endpoint). Pages of two files or changes, so a sync has several
 * checkpoints.
 *
 * The suite's documents start with the folder's readers as their permission: the folder has no grants, so nobody
 * (`__private__`). `setPermission` gives a
 * file exactly the grants of the capture. Time passes at the source (an hour) before each change, as it does between
 * syncs.
 */
const FOLDER = 'conformance-folder';
const HOUR = 3600_000;

function grantsOf(capture: PermissionCapture): DrivePermission[] {
  if (capture.status !== 'captured' || capture.acl === null) return [];
  return capture.acl.map((principal, i): DrivePermission => {
    const id = `perm-${i}`;
    if (principal === '__public__') return { id, type: 'anyone', role: 'reader', allowFileDiscovery: true };
    if (principal.startsWith('user_email:')) return { id, type: 'user', role: 'reader', emailAddress: principal.slice('user_email:'.length) };
    if (principal.startsWith('group:google:')) return { id, type: 'group', role: 'reader', emailAddress: principal.slice('group:google:'.length) };
    if (principal.startsWith('domain:')) return { id, type: 'domain', role: 'reader', domain: principal.slice('domain:'.length), allowFileDiscovery: true };
    throw new Error(`no Drive grant gives ${principal}`);
  });
}

connectorConformance('google drive provider', () => {
  const fake = new DriveFake();
  let key = '';
  return {
    providerId: 'google_drive',
    resource: { resourceId: FOLDER, resourceType: 'folder', name: 'Conformance folder' },
    get credentials() {
      return { service_account_key: key };
    },
    async setUp(t) {
      await fake.start();
      key = fake.serviceAccountKey();
      fake.addFile({ id: FOLDER, name: 'Conformance folder', mimeType: 'application/vnd.google-apps.folder', parents: [fake.myDriveRoot] });
      t.get(tokens.CONNECTOR_PROVIDERS).register(new GoogleDriveProvider({ allowPrivateNetworks: true, apiUrl: fake.url, pageSize: 2, maxRetryDelayMs: 50 }));
    },
    async tearDown() {
      await fake.stop();
    },
    async put(id, text) {
      fake.advanceClock(HOUR);
      if (fake.hasFile(id)) fake.editFile(id, text);
      else fake.addFile({ id, name: `Document ${id}.txt`, mimeType: 'text/plain', parents: [FOLDER] }, text);
    },
    async remove(id) {
      fake.advanceClock(HOUR);
      fake.deleteFile(id);
    },
    async revokeCredentials() {
      fake.revokeServiceAccountKey();
    },
    async restoreCredentials() {
      fake.restoreServiceAccountKey();
    },
    initialPermission: { status: 'captured', acl: ['__private__'] },
    async setPermission(id, permission) {
      fake.advanceClock(HOUR);
      fake.setPermissions(id, grantsOf(permission));
    },
    /** The second read of the changes feed from now is throttled until `retryAt`: the first page of the sync commits. */
    rateLimit(retryAt) {
      fake.throttle('/drive/v3/changes', { nth: 2, retryAfter: retryAt.toUTCString() });
    },
  };
});
