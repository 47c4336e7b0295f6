import { auth, drive, type drive_v3 } from '@googleapis/drive';
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
      const res: { data: drive_v3.Schema$ChangeList } = await gdrive.changes.list({ pageToken, pageSize: 2, supportsAllDrives: true, includeItemsFromAllDrives: true, fields: 'nextPageToken,newStartPageToken,changes(fileId,removed,file(id,name,trashed,modifiedTime,version,permissions(id,type,role,emailAddress,domain)))' });
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
    expect(changes[2].file).toMatchObject({ version: '2', permissions: [{ id: 'perm-ada', type: 'user', role: 'writer', emailAddress: 'ada@example.test' }] });
    expect((await allChanges(newStartPageToken)).changes).toEqual([]);

    const modifiedBefore = (await gdrive.files.get({ fileId: 'doc-d', fields: 'modifiedTime,version' })).data;
    fake.share('doc-d', { id: 'perm-grace', type: 'user', role: 'reader', emailAddress: 'grace@example.test' });
    const permissionOnly = await allChanges(newStartPageToken);
    expect(permissionOnly.changes.map((c) => c.fileId)).toEqual(['doc-d']);
    expect(permissionOnly.changes[0].file).toMatchObject({ ...modifiedBefore, permissions: [{ id: 'perm-grace', emailAddress: 'grace@example.test' }] });
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
});
