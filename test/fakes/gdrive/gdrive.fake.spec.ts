import { auth, drive, type drive_v3 } from '@googleapis/drive';
import { exchangeServiceAccountKey, readCredentials } from '@crs/connectors/providers/google-drive/google-drive-auth';
import type { RunningFake } from '../loopback-server';
import { DriveFake } from './gdrive-fake';

const FOLDER = 'application/vnd.google-apps.folder';
const ENGINEERING = '0AEngineeringDrive';

/** What the client rejects with on an HTTP failure (a GaxiosError), as far as a connector reads it. */
type DriveHttpError = { status?: number; response?: { headers: Headers; data: unknown } };

/** The seeded source: one shared drive with a folder of three documents under user, group, domain and public grants. */
function seed(fake: DriveFake): void {
  fake.addDrive(ENGINEERING, 'Engineering');
  fake.addDrive('0AFinanceDrive', 'Finance');
  fake.addFile({ id: 'folder-specs', name: 'Specs', mimeType: FOLDER, parents: [ENGINEERING], driveId: ENGINEERING });
  fake.addFile({ id: 'doc-a', name: 'Architecture.md', parents: ['folder-specs'], driveId: ENGINEERING }, '# Architecture', [
    { id: 'perm-ada', type: 'user', role: 'writer', emailAddress: 'ada@example.test' },
    { id: 'perm-eng', type: 'group', role: 'reader', emailAddress: 'eng@example.test' },
  ]);
  fake.addFile({ id: 'doc-b', name: 'Budget.csv', mimeType: 'text/csv', parents: ['folder-specs'], driveId: ENGINEERING }, 'item,cost\nservers,10', [
    { id: 'perm-domain', type: 'domain', role: 'reader', domain: 'example.test', allowFileDiscovery: false },
  ]);
  fake.addFile({ id: 'doc-c', name: 'Charter.txt', parents: ['folder-specs'], driveId: ENGINEERING }, 'Our charter', [
    { id: 'anyoneWithLink', type: 'anyone', role: 'reader', allowFileDiscovery: false },
  ]);
}

describe('Google Drive v3 fake, driven by @googleapis/drive', () => {
  let fake: DriveFake;
  let server: RunningFake;
  let gdrive: drive_v3.Drive;

  /**
   * gaxios loads the ESM-only node-fetch unless given a fetch, and jest cannot load ESM without a transform; Node 20's
   * own fetch avoids both. `retryConfig` is the client's; the default retries 429 and 5xx three times.
   */
  const client = (retryConfig?: { statusCodesToRetry: number[][] }) => {
    const oauth = new auth.OAuth2();
    oauth.setCredentials({ access_token: fake.token });
    return drive({ version: 'v3', auth: oauth, rootUrl: `${server.url}/`, fetchImplementation: fetch, ...(retryConfig ? { retryConfig } : {}) });
  };

  async function listAll(params: drive_v3.Params$Resource$Files$List): Promise<{ pages: number; files: drive_v3.Schema$File[] }> {
    const files: drive_v3.Schema$File[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const res = await gdrive.files.list({ ...params, pageToken });
      files.push(...(res.data.files ?? []));
      pageToken = res.data.nextPageToken ?? undefined;
      pages++;
    } while (pageToken);
    return { pages, files };
  }

  async function allChanges(startPageToken: string): Promise<{ changes: drive_v3.Schema$Change[]; newStartPageToken: string }> {
    const changes: drive_v3.Schema$Change[] = [];
    let pageToken: string | undefined = startPageToken;
    for (;;) {
      const res: { data: drive_v3.Schema$ChangeList } = await gdrive.changes.list({ pageToken, pageSize: 2, supportsAllDrives: true, includeItemsFromAllDrives: true, fields: 'nextPageToken,newStartPageToken,changes(fileId,removed,file(id,name,trashed,modifiedTime,version,permissionIds,permissions(id,type,role,emailAddress,domain)))' });
      changes.push(...(res.data.changes ?? []));
      if (res.data.newStartPageToken) return { changes, newStartPageToken: res.data.newStartPageToken };
      pageToken = res.data.nextPageToken!;
    }
  }

  beforeEach(async () => {
    fake = new DriveFake();
    seed(fake);
    server = await fake.start();
    gdrive = client();
  });

  afterEach(() => fake.stop());

  it('checks the token with about.get and lists shared drives page by page', async () => {
    expect((await gdrive.about.get({ fields: 'user(emailAddress)' })).data).toEqual({ user: { emailAddress: 'crs-connector@example.test' } });
    const first = await gdrive.drives.list({ pageSize: 1 });
    const second = await gdrive.drives.list({ pageSize: 1, pageToken: first.data.nextPageToken! });
    expect([first.data.drives!.map((d) => d.name), second.data.drives!.map((d) => d.name)]).toEqual([['Engineering'], ['Finance']]);
    expect(second.data.nextPageToken).toBeUndefined();
  });

  it('lists a folder through nextPageToken, with only the fields asked for', async () => {
    const { pages, files } = await listAll({ q: "'folder-specs' in parents and trashed = false", pageSize: 2, orderBy: 'name', driveId: ENGINEERING, corpora: 'drive', includeItemsFromAllDrives: true, supportsAllDrives: true, fields: 'nextPageToken, files(id, name, mimeType, md5Checksum)' });
    expect(pages).toBe(2);
    expect(files).toEqual([
      { id: 'doc-a', name: 'Architecture.md', mimeType: 'text/plain', md5Checksum: expect.stringMatching(/^[0-9a-f]{32}$/) },
      { id: 'doc-b', name: 'Budget.csv', mimeType: 'text/csv', md5Checksum: expect.any(String) },
      { id: 'doc-c', name: 'Charter.txt', mimeType: 'text/plain', md5Checksum: expect.any(String) },
    ]);
    const defaults = await gdrive.files.list({ q: "'folder-specs' in parents", pageSize: 1 });
    expect(Object.keys(defaults.data.files![0]).sort()).toEqual(['id', 'kind', 'mimeType', 'name']);
  });

  it('downloads bytes with alt=media and reads user, group, domain and public grants', async () => {
    const bytes = await gdrive.files.get({ fileId: 'doc-b', alt: 'media', supportsAllDrives: true }, { responseType: 'text' });
    expect(bytes.data).toBe('item,cost\nservers,10');
    const grants = async (fileId: string) => (await gdrive.permissions.list({ fileId, supportsAllDrives: true, fields: 'permissions(type,role,emailAddress,domain)' })).data.permissions;
    expect(await grants('doc-a')).toEqual([{ type: 'user', role: 'writer', emailAddress: 'ada@example.test' }, { type: 'group', role: 'reader', emailAddress: 'eng@example.test' }]);
    expect(await grants('doc-b')).toEqual([{ type: 'domain', role: 'reader', domain: 'example.test' }]);
    expect(await grants('doc-c')).toEqual([{ type: 'anyone', role: 'reader' }]);
    const paged = await gdrive.permissions.list({ fileId: 'doc-a', pageSize: 1 });
    expect(paged.data.permissions).toEqual([{ id: 'perm-ada', type: 'user', kind: 'drive#permission', role: 'writer' }]);
    expect(paged.data.nextPageToken).toBeDefined();
  });

  it('reports edits, trashing, deletion and permission-only changes through the changes feed, once per file', async () => {
    const { data: start } = await gdrive.changes.getStartPageToken({ supportsAllDrives: true });
    fake.editFile('doc-a', '# Architecture v2');
    fake.trashFile('doc-c');
    fake.deleteFile('doc-b');
    fake.unshare('doc-a', 'perm-eng');
    fake.addFile({ id: 'doc-d', name: 'Decisions.md', parents: ['folder-specs'], driveId: ENGINEERING }, 'ADR-1');

    const { changes, newStartPageToken } = await allChanges(start.startPageToken!);
    expect(changes.map((c) => [c.fileId, c.removed, c.file?.trashed])).toEqual([
      ['doc-c', false, true],
      ['doc-b', true, undefined],
      ['doc-a', false, false],
      ['doc-d', false, false],
    ]);
    // A shared drive's files carry their grant ids, not their grants (permissions.list has those).
    expect(changes[2].file).toEqual({ id: 'doc-a', name: 'Architecture.md', trashed: false, modifiedTime: expect.any(String), version: '2', permissionIds: ['perm-ada'] });
    expect((await allChanges(newStartPageToken)).changes).toEqual([]);

    const modifiedBefore = (await gdrive.files.get({ fileId: 'doc-d', fields: 'modifiedTime,version' })).data;
    fake.share('doc-d', { id: 'perm-grace', type: 'user', role: 'reader', emailAddress: 'grace@example.test' });
    const permissionOnly = await allChanges(newStartPageToken);
    expect(permissionOnly.changes.map((c) => c.fileId)).toEqual(['doc-d']);
    expect(permissionOnly.changes[0].file).toMatchObject({ ...modifiedBefore, permissionIds: ['perm-grace'] });
  });

  it('catches an edit made during the first full listing through the start token saved before it', async () => {
    const { data: start } = await gdrive.changes.getStartPageToken({});
    fake.switches.afterRequests(1, () => fake.editFile('doc-a', '# Architecture, edited mid-crawl'));
    const { files } = await listAll({ q: "'folder-specs' in parents", pageSize: 1, orderBy: 'name' });
    expect(files.map((f) => f.id)).toEqual(['doc-a', 'doc-b', 'doc-c']);
    const { changes } = await allChanges(start.startPageToken!);
    expect(changes.map((c) => [c.fileId, c.file?.version])).toEqual([['doc-a', '2']]);
  });

  it('misses a back-dated modifiedTime in a time query, while the changes feed reports it', async () => {
    const { data: start } = await gdrive.changes.getStartPageToken({});
    const lastSync = (await gdrive.files.get({ fileId: 'doc-c', fields: 'modifiedTime' })).data.modifiedTime!;
    fake.editFile('doc-a', '# Architecture restored from an old copy', '2020-01-01T00:00:00.000Z');
    const byTime = await gdrive.files.list({ q: `modifiedTime > '${lastSync}'` });
    expect(byTime.data.files).toEqual([]);
    expect((await allChanges(start.startPageToken!)).changes.map((c) => [c.fileId, c.file?.modifiedTime])).toEqual([['doc-a', '2020-01-01T00:00:00.000Z']]);
  });

  it('retries 429 without waiting for its Retry-After, and a 5xx burst, with the default retry config', async () => {
    fake.switches.rateLimitNext(1, 30);
    fake.switches.failNext(2, 503);
    const started = Date.now();
    const res = await gdrive.files.list({ q: "'folder-specs' in parents" });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(res.data.files).toHaveLength(3);
    expect(fake.switches.requests.filter((r) => r.startsWith('GET /drive/v3/files'))).toHaveLength(4);
  });

  it('surfaces a 429 with its Retry-After when the connector keeps 429 out of the client retries', async () => {
    const deferring = client({ statusCodesToRetry: [[500, 599]] });
    fake.switches.rateLimitNext(1, 45);
    const error = (await deferring.files.list({}).catch((e: unknown) => e)) as DriveHttpError;
    expect(error.status).toBe(429);
    expect(error.response?.headers.get('retry-after')).toBe('45');
    expect(fake.switches.requests).toHaveLength(1);
  });

  it('fails with 401 UNAUTHENTICATED, unretried, when the token is revoked mid-sync', async () => {
    fake.switches.afterRequests(1, () => fake.switches.revokeToken(fake.token));
    const error = (await listAll({ pageSize: 1 }).catch((e: unknown) => e)) as DriveHttpError;
    expect(error.status).toBe(401);
    expect((error.response?.data as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
    expect(fake.switches.requests).toHaveLength(2);
  });
  it('lists grants with permissions.list: a shared drive file inherits its folders\' grants and the drive\'s members; membership changes are one drive change', async () => {
    fake.addDriveMember(ENGINEERING, { id: 'perm-org', type: 'user', role: 'organizer', emailAddress: 'org@example.test' });
    fake.share('folder-specs', { id: 'perm-folder', type: 'group', role: 'reader', emailAddress: 'specs@example.test' });
    const listed = await gdrive.permissions.list({ fileId: 'doc-b', supportsAllDrives: true, fields: 'permissions(id)' });
    expect(listed.data.permissions!.map((p) => p.id)).toEqual(['perm-domain', 'perm-folder', 'perm-org']);
    const members = await gdrive.permissions.list({ fileId: ENGINEERING, supportsAllDrives: true, fields: 'permissions(id,emailAddress)' });
    expect(members.data.permissions).toEqual([{ id: 'perm-org', emailAddress: 'org@example.test' }]);
    const file = await gdrive.files.get({ fileId: 'doc-b', supportsAllDrives: true, fields: 'id,permissions,permissionIds' });
    expect(file.data).toEqual({ id: 'doc-b', permissionIds: ['perm-domain', 'perm-folder', 'perm-org'] });

    const { data: start } = await gdrive.changes.getStartPageToken({ driveId: ENGINEERING, supportsAllDrives: true });
    fake.removeDriveMember(ENGINEERING, 'perm-org');
    const res = await gdrive.changes.list({ pageToken: start.startPageToken!, driveId: ENGINEERING, supportsAllDrives: true, includeItemsFromAllDrives: true, fields: 'newStartPageToken,changes(changeType,driveId,removed,fileId)' });
    expect(res.data.changes).toEqual([{ changeType: 'drive', driveId: ENGINEERING, removed: false }]);
    const myDrive = await gdrive.changes.list({ pageToken: start.startPageToken!, fields: 'changes(fileId)' });
    expect(myDrive.data.changes).toEqual([]);
  });

  it('exports Docs editors files, which have no bytes or checksum of their own, and answers a query with or, parentheses, root and sharedWithMe', async () => {
    fake.addFile({ id: 'gdoc', name: 'Plan', mimeType: 'application/vnd.google-apps.document', parents: [fake.myDriveRoot] }, '# Plan\n\nShip it.');
    fake.addFile({ id: 'shared-folder', name: 'Shared', mimeType: FOLDER, parents: ['0AOtherUsersRoot'], sharedWithMeTime: fake.now });
    const meta = await gdrive.files.get({ fileId: 'gdoc', fields: 'id,md5Checksum,size' });
    expect(meta.data).toEqual({ id: 'gdoc', size: String(Buffer.byteLength('# Plan\n\nShip it.')) });
    const exported = await gdrive.files.export({ fileId: 'gdoc', mimeType: 'text/markdown' }, { responseType: 'text' });
    expect(exported.data).toBe('# Plan\n\nShip it.');
    const download = (await gdrive.files.get({ fileId: 'gdoc', alt: 'media' }).catch((e: unknown) => e)) as DriveHttpError;
    expect([download.status, (download.response?.data as { error: { errors: { reason: string }[] } }).error.errors[0].reason]).toEqual([403, 'fileNotDownloadable']);
    const notExportable = (await gdrive.files.export({ fileId: 'doc-a', mimeType: 'text/plain' }).catch((e: unknown) => e)) as DriveHttpError;
    expect(notExportable.status).toBe(403);

    const q = async (query: string) => (await gdrive.files.list({ q: query, fields: 'files(id)' })).data.files!.map((f) => f.id).sort();
    expect(await q("('folder-specs' in parents or 'nowhere' in parents) and trashed = false and mimeType != 'text/csv'")).toEqual(['doc-a', 'doc-c']);
    expect(await q(`mimeType = '${FOLDER}' and ('root' in parents or sharedWithMe)`)).toEqual(['shared-folder']);
  });

  it('issues access tokens for a service account key at its token endpoint, and refuses a deleted key and an undelegated subject', async () => {
    const key = fake.serviceAccountKey('reader@crs-test.iam.gserviceaccount.com', ['ada@example.test']);
    const creds = readCredentials({ service_account_key: key });
    if (creds.kind !== 'service_account') throw new Error('not a service account key');
    const token = await exchangeServiceAccountKey(creds.key, null, { allowPrivateNetworks: true });
    expect(token.accessToken).toMatch(/^ya29\.sa-\d+$/);
    const oauth = new auth.OAuth2();
    oauth.setCredentials({ access_token: token.accessToken });
    const withToken = drive({ version: 'v3', auth: oauth, rootUrl: `${server.url}/`, fetchImplementation: fetch });
    expect((await withToken.about.get({ fields: 'user(emailAddress)' })).data.user?.emailAddress).toBe('crs-connector@example.test');
    await expect(exchangeServiceAccountKey(creds.key, 'ada@example.test', { allowPrivateNetworks: true })).resolves.toMatchObject({ accessToken: expect.any(String) });
    await expect(exchangeServiceAccountKey(creds.key, 'eve@example.test', { allowPrivateNetworks: true })).rejects.toMatchObject({ kind: 'scope', message: expect.stringContaining('unauthorized_client') });

    fake.revokeServiceAccountKey('reader@crs-test.iam.gserviceaccount.com');
    await expect(exchangeServiceAccountKey(creds.key, null, { allowPrivateNetworks: true })).rejects.toMatchObject({ kind: 'auth', message: expect.stringContaining('invalid_grant: Invalid JWT Signature.') });
    expect(((await withToken.about.get({}).catch((e: unknown) => e)) as DriveHttpError).status).toBe(401);
    expect(fake.switches.requests.filter((r) => r.startsWith('POST /token'))).toHaveLength(4);
  });

  it('dates every answer with its own clock, and throttles a chosen request with 403 userRateLimitExceeded and an HTTP-date Retry-After', async () => {
    fake.advanceClock(3600_000);
    const at = Date.parse(fake.now);
    const res = await gdrive.about.get({ fields: 'user(emailAddress)' });
    expect(Date.parse(res.headers.date!)).toBe(Math.floor(at / 1000) * 1000);
    const deferring = client({ statusCodesToRetry: [[500, 599]] });
    fake.throttle('/drive/v3/changes', { nth: 2, status: 403, retryAfter: 'Wed, 01 Jan 2031 01:10:00 GMT' });
    const { data: start } = await deferring.changes.getStartPageToken({});
    await deferring.changes.list({ pageToken: start.startPageToken! });
    const error = (await deferring.changes.list({ pageToken: start.startPageToken! }).catch((e: unknown) => e)) as DriveHttpError;
    expect([error.status, error.response?.headers.get('retry-after'), (error.response?.data as { error: { errors: { reason: string }[] } }).error.errors[0].reason]).toEqual([403, 'Wed, 01 Jan 2031 01:10:00 GMT', 'userRateLimitExceeded']);
    await expect(deferring.changes.list({ pageToken: start.startPageToken! })).resolves.toMatchObject({ status: 200 });
  });
});
