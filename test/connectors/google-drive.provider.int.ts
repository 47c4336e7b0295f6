import fc from 'fast-check';
import { callerPrincipals, isVisible } from '@crs/domain/acl';
import { effectiveAccess } from '@crs/domain/connectors/access-precedence';
import { configFromEnv } from '@crs/config';
import { AuthError, ConfigurationError, DocumentError, RateLimitedError, ResourceGoneError, ScopeError, TargetForbiddenError, TransientError } from '@crs/connectors/provider-errors';
import type { ProviderContext, ResourceConfig, SyncedDocument, SyncEvent } from '@crs/connectors/provider.port';
import { exchangeServiceAccountKey, readCredentials, requestServiceAccountToken } from '@crs/connectors/providers/google-drive/google-drive-auth';
import { GoogleDriveProvider, type GoogleDriveProviderOptions } from '@crs/connectors/providers/google-drive/google-drive.provider';
import * as tokens from '@crs/platform/tokens';
import { DriveFake, type DrivePermission } from '../fakes/gdrive/gdrive-fake';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The Google Drive provider against the Drive fake on 127.0.0.1: credentials, discovery, the first sync and the
 * changes feed after it, permission capture, folder scoping, throttling, server errors, a token revoked mid-sync,
 * edits during a crawl, back-dated times, and the calls an unchanged sync makes; then, through HTTP, what callers
 * with `acl` principals retrieve as grants change in the drive; and a property over random grant sets.
 */
const FOLDER_MIME = 'application/vnd.google-apps.folder';
const DOC_MIME = 'application/vnd.google-apps.document';
const DRIVE = '0AEngineering';
const HOUR = 3600_000;
const ORGANIZER: DrivePermission = { id: 'perm-org', type: 'user', role: 'organizer', emailAddress: 'org@example.test' };
const ADA: DrivePermission = { id: 'perm-ada', type: 'user', role: 'reader', emailAddress: 'ada@example.test' };
const DOMAIN: DrivePermission = { id: 'perm-domain', type: 'domain', role: 'reader', domain: 'example.test', allowFileDiscovery: true };

const driveResource: ResourceConfig = { resourceId: DRIVE, resourceType: 'shared_drive', name: 'Engineering' };
const folderResource = (id: string): ResourceConfig => ({ resourceId: id, resourceType: 'folder', name: id });

async function drain<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of iterable) out.push(x);
  return out;
}

/** Runs a sync to its end, or to its error: the events it yielded and what it threw. */
async function syncUntilError(provider: GoogleDriveProvider, ctx: ProviderContext, resource: ResourceConfig, cursor: string | null): Promise<{ events: SyncEvent[]; error: unknown }> {
  const events: SyncEvent[] = [];
  try {
    for await (const e of provider.sync(ctx, resource, cursor)) events.push(e);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

const upserts = (events: SyncEvent[]): SyncedDocument[] => events.flatMap((e) => (e.kind === 'upsert' ? [e.doc] : []));
const textOf = (doc: SyncedDocument) => (doc.content.kind === 'bytes' ? Buffer.from(doc.content.bytes).toString('utf8') : doc.content.text);
const lastCursor = (events: SyncEvent[]): string => {
  const last = events[events.length - 1];
  if (last?.kind !== 'checkpoint') throw new Error(`the sync did not end with a checkpoint: ${JSON.stringify(last)}`);
  return last.cursor;
};
/** The request log as `METHOD path`, queries left out. */
const paths = (fake: DriveFake, from = 0) => fake.switches.requests.slice(from).map((r) => r.split('?')[0]);

/** A shared drive with a member, a folder, a Google Doc, a CSV, an image and a trashed file. */
function seedDrive(fake: DriveFake): void {
  fake.addDrive(DRIVE, 'Engineering', [ORGANIZER]);
  fake.addFile({ id: 'specs', name: 'Specs', mimeType: FOLDER_MIME, parents: [DRIVE], driveId: DRIVE });
  fake.addFile({ id: 'plan', name: 'Plan', mimeType: DOC_MIME, parents: ['specs'], driveId: DRIVE }, '# Plan\n\nShip the kestrel survey.', [ADA]);
  fake.addFile({ id: 'budget', name: 'Budget.csv', mimeType: 'text/csv', parents: [DRIVE], driveId: DRIVE }, 'item,cost\nheron hide,10', [DOMAIN]);
  fake.addFile({ id: 'photo', name: 'Photo.png', mimeType: 'image/png', parents: [DRIVE], driveId: DRIVE }, 'not text');
  fake.addFile({ id: 'old', name: 'Old.txt', parents: [DRIVE], driveId: DRIVE }, 'gone');
  fake.trashFile('old');
}

describe('google drive provider against the drive fake', () => {
  let fake: DriveFake;
  let ctx: ProviderContext;
  const make = (options: Partial<GoogleDriveProviderOptions> = {}) => new GoogleDriveProvider({ allowPrivateNetworks: true, apiUrl: fake.url, maxRetryDelayMs: 20, ...options });

  beforeEach(async () => {
    fake = new DriveFake();
    await fake.start();
    ctx = { credentials: { access_token: fake.token } };
  });
  afterEach(() => fake.stop());

  describe('credentials and discovery', () => {
    it('validates a service account key at its token endpoint (acting as itself or as a delegated user) and an access token, with a warning for the token', async () => {
      const provider = make();
      const key = fake.serviceAccountKey('reader@crs-test.iam.gserviceaccount.com', ['ada@example.test']);
      await expect(provider.validateCredentials({ credentials: { service_account_key: key } })).resolves.toEqual({ accountScope: 'crs-connector@example.test', displayName: 'CRS connector <crs-connector@example.test>', warnings: [] });
      await expect(provider.validateCredentials({ credentials: { service_account_key: key, subject: 'ada@example.test' } })).resolves.toMatchObject({ warnings: [] });
      const refused = await provider.validateCredentials({ credentials: { service_account_key: key, subject: 'eve@example.test' } }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ScopeError);
      expect((refused as Error).message).toMatch(/may not act as eve@example.test .*domain-wide delegation/);
      const token = await provider.validateCredentials(ctx);
      expect(token.warnings).toEqual([expect.stringMatching(/expires after about an hour/)]);
      expect(fake.switches.requests.filter((r) => r.startsWith('POST /token'))).toHaveLength(3);
    });

    it('refuses malformed credentials with a message that says what to give, and never echoes the key', async () => {
      const provider = make();
      const key = fake.serviceAccountKey();
      const cases: [Record<string, unknown>, RegExp][] = [
        [{}, /Give service_account_key .* or access_token/],
        [{ service_account_key: key, access_token: 'x' }, /either service_account_key or access_token, not both/],
        [{ service_account_key: '{"private_key": "-----BEGIN' }, /not JSON/],
        [{ service_account_key: JSON.stringify({ type: 'authorized_user' }) }, /"type" must be "service_account"/],
        [{ service_account_key: JSON.stringify({ type: 'service_account', client_email: 'a@b.c' }) }, /lacks private_key, token_uri/],
        [{ access_token: 'x', subject: 'ada@example.test' }, /subject applies to a service account key only/],
        [{ service_account_key: JSON.stringify({ ...JSON.parse(key), private_key: 'not a key' }) }, /cannot sign/],
      ];
      for (const [credentials, message] of cases) {
        const error = await provider.validateCredentials({ credentials }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ConfigurationError);
        expect((error as Error).message).toMatch(message);
        expect((error as Error).message).not.toContain('PRIVATE KEY');
      }
    });

    it('without allowPrivateNetworks refuses a token_uri on this machine before connecting, and checks the address again when it connects', async () => {
      const guarded = new GoogleDriveProvider({ apiUrl: fake.url });
      const key = fake.serviceAccountKey();
      for (const host of ['127.0.0.1', 'localhost']) {
        const local = JSON.stringify({ ...JSON.parse(key), token_uri: `https://${host}:${new URL(fake.url).port}/token` });
        await expect(guarded.validateCredentials({ credentials: { service_account_key: local } })).rejects.toBeInstanceOf(TargetForbiddenError);
        await expect(drain(guarded.sync({ credentials: { service_account_key: local } }, driveResource, null))).rejects.toBeInstanceOf(TargetForbiddenError);
      }
      await expect(guarded.validateCredentials({ credentials: { service_account_key: key } })).rejects.toThrow(/must be an https:\/\/ URL/);
      expect(fake.switches.requests).toEqual([]);
      // The connect-time check alone: a literal loopback address, a name that resolves to loopback, and a name that
      // resolved to a public address when checked and to loopback when connecting.
      const creds = readCredentials({ service_account_key: key });
      if (creds.kind !== 'service_account') throw new Error('not a key');
      const at = (uri: string) => ({ ...creds.key, tokenUri: new URL(uri) });
      await expect(requestServiceAccountToken(at(`${fake.url}/token`), null, { allowPrivateNetworks: false })).rejects.toBeInstanceOf(TargetForbiddenError);
      await expect(requestServiceAccountToken(at(`http://localhost:${new URL(fake.url).port}/token`), null, { allowPrivateNetworks: false })).rejects.toBeInstanceOf(TargetForbiddenError);
      let answers = 0;
      const rebinding = async () => [{ address: answers++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
      await expect(exchangeServiceAccountKey(at('https://oauth2.example.test/token'), null, { allowPrivateNetworks: false, lookup: rebinding })).rejects.toBeInstanceOf(TargetForbiddenError);
      expect(answers).toBe(2);
      expect(fake.switches.requests).toEqual([]);
    });

    it('discovers the shared drives and the folders at the top of My Drive or shared with the account', async () => {
      seedDrive(fake);
      fake.addFile({ id: 'top', name: 'Top', mimeType: FOLDER_MIME, parents: [fake.myDriveRoot] });
      fake.addFile({ id: 'nested', name: 'Nested', mimeType: FOLDER_MIME, parents: ['top'] });
      fake.addFile({ id: 'theirs', name: 'Theirs', mimeType: FOLDER_MIME, parents: ['0AOtherRoot'], sharedWithMeTime: fake.now });
      fake.addFile({ id: 'binned', name: 'Binned', mimeType: FOLDER_MIME, parents: [fake.myDriveRoot] });
      fake.trashFile('binned');
      const found = await make().discoverResources(ctx);
      expect(found.map((r) => [r.resourceType, r.resourceId, r.name])).toEqual([
        ['shared_drive', DRIVE, 'Engineering'],
        ['folder', 'theirs', 'Theirs'],
        ['folder', 'top', 'Top'],
      ]);
      expect(found[1].details).toMatchObject({ shared_with_me: true });
    });
  });

  describe('syncing', () => {
    it('a first sync lists the drive in pages (a checkpoint after each), exports Google files, downloads the rest, and leaves out folders, trashed and unreadable files', async () => {
      seedDrive(fake);
      const provider = make({ pageSize: 2 });
      const events = await drain(provider.sync(ctx, driveResource, null));
      // Listing pages of two (budget and photo, then plan and the folder), then the feed read from before the listing.
      expect(events.map((e) => (e.kind === 'upsert' ? `upsert ${e.doc.id}` : e.kind))).toEqual(['upsert budget', 'checkpoint', 'upsert plan', 'checkpoint', 'checkpoint']);
      const [budget, plan] = upserts(events);
      expect(plan).toMatchObject({
        title: 'Plan',
        content: { kind: 'bytes', mimeType: 'text/markdown' },
        permission: { status: 'captured', acl: ['user_email:ada@example.test', 'user_email:org@example.test'] },
        metadata: { file_id: 'plan', mime_type: DOC_MIME, exported_as: 'text/markdown', drive_id: DRIVE, folder_id: 'specs' },
        filterableFields: { mime_type: DOC_MIME, folder_id: 'specs', drive_id: DRIVE },
      });
      expect(textOf(plan)).toBe('# Plan\n\nShip the kestrel survey.');
      expect(budget).toMatchObject({ content: { kind: 'bytes', mimeType: 'text/csv' }, permission: { status: 'captured', acl: ['domain:example.test', 'user_email:org@example.test'] } });
      // The listing's hashes are the sync's.
      const listed = await drain(provider.listExistingIds(ctx, driveResource));
      expect(listed).toEqual([{ id: 'budget', contentHash: budget.contentHash }, { id: 'plan', contentHash: plan.contentHash }]);
      expect(paths(fake).filter((p) => /\/(photo|old)/.test(p))).toEqual([]);
    });

    it('an unchanged sync makes three calls: the resource\'s grants, one listing page and one read of the changes feed', async () => {
      seedDrive(fake);
      const provider = make();
      const cursor = lastCursor(await drain(provider.sync(ctx, driveResource, null)));
      const from = fake.switches.requests.length;
      await provider.capturePermissions(ctx, driveResource);
      await drain(provider.listExistingIds(ctx, driveResource));
      const events = await drain(provider.sync(ctx, driveResource, cursor));
      expect(events.map((e) => e.kind)).toEqual(['checkpoint']);
      expect(paths(fake, from)).toEqual([`GET /drive/v3/files/${DRIVE}/permissions`, 'GET /drive/v3/files', 'GET /drive/v3/changes']);
    });

    it('a cursor of an earlier version, or one that cannot be read, starts over: the feed position is taken before the listing, every file is read with its permission', async () => {
      seedDrive(fake);
      const provider = make();
      const saved = JSON.parse(lastCursor(await drain(provider.sync(ctx, driveResource, null)))) as Record<string, unknown>;
      expect(saved.v).toBe(2);
      const unreadable = [JSON.stringify({ ...saved, v: 1 }), 'not json', 'null', JSON.stringify({ ...saved, walk: { kind: 'tree', pending: [], batch: [], pageToken: null } }), JSON.stringify({ ...saved, pageToken: 7 })];
      for (const cursor of unreadable) {
        const from = fake.switches.requests.length;
        const { events, error } = await syncUntilError(provider, ctx, driveResource, cursor);
        expect([cursor, error]).toEqual([cursor, undefined]);
        expect(paths(fake, from).slice(0, 4)).toEqual([`GET /drive/v3/drives/${DRIVE}`, `GET /drive/v3/files/${DRIVE}/permissions`, 'GET /drive/v3/changes/startPageToken', 'GET /drive/v3/files']);
        expect(upserts(events).map((d) => [d.id, d.permission])).toEqual([
          ['budget', { status: 'captured', acl: ['domain:example.test', 'user_email:org@example.test'] }],
          ['plan', { status: 'captured', acl: ['user_email:ada@example.test', 'user_email:org@example.test'] }],
        ]);
        expect(JSON.parse(lastCursor(events)).v).toBe(2);
      }
    });

    it('the changes feed: an edit is read again; a permission-only change is a permission event, with no download or export', async () => {
      seedDrive(fake);
      const provider = make();
      const cursor = lastCursor(await drain(provider.sync(ctx, driveResource, null)));
      fake.advanceClock(HOUR);
      fake.editFile('budget', 'item,cost\nheron hide,12');
      fake.unshare('plan', 'perm-ada');
      const from = fake.switches.requests.length;
      const events = await drain(provider.sync(ctx, driveResource, cursor));
      expect(events.filter((e) => e.kind !== 'checkpoint')).toEqual([
        { kind: 'upsert', doc: expect.objectContaining({ id: 'budget' }) },
        // plan's readers are now the drive's members: it carries them as its own permission
        { kind: 'permission', id: 'plan', permission: { status: 'captured', acl: ['user_email:org@example.test'] } },
      ]);
      expect(textOf(upserts(events)[0])).toBe('item,cost\nheron hide,12');
      expect(paths(fake, from)).toEqual(['GET /drive/v3/changes', 'GET /drive/v3/files/budget', 'GET /drive/v3/files/budget/permissions', 'GET /drive/v3/files/plan/permissions']);
    });

    it('a removed drive member: every file of the drive is captured again from one drive change, without reading any content', async () => {
      seedDrive(fake);
      const provider = make();
      const cursor = lastCursor(await drain(provider.sync(ctx, driveResource, null)));
      fake.removeDriveMember(DRIVE, 'perm-org');
      const from = fake.switches.requests.length;
      const events = await drain(provider.sync(ctx, driveResource, cursor));
      expect(events.filter((e) => e.kind !== 'checkpoint')).toEqual([
        { kind: 'permission', id: 'budget', permission: { status: 'captured', acl: ['domain:example.test'] } },
        { kind: 'permission', id: 'plan', permission: { status: 'captured', acl: ['user_email:ada@example.test'] } },
      ]);
      expect(paths(fake, from)).toEqual(['GET /drive/v3/changes', `GET /drive/v3/files/${DRIVE}/permissions`, 'GET /drive/v3/files', 'GET /drive/v3/files/budget/permissions', 'GET /drive/v3/files/plan/permissions']);
    });

    it('a back-dated edit shows as a permission event in the feed; the listing\'s hash tells it changed and fetchDocuments reads it again', async () => {
      seedDrive(fake);
      const provider = make();
      const first = await drain(provider.sync(ctx, driveResource, null));
      const before = upserts(first).find((d) => d.id === 'budget')!;
      fake.advanceClock(HOUR);
      fake.editFile('budget', 'item,cost\nrestored,1', '2020-01-01T00:00:00.000Z');
      const events = await drain(provider.sync(ctx, driveResource, lastCursor(first)));
      expect(events.filter((e) => e.kind !== 'checkpoint').map((e) => [e.kind, e.kind === 'permission' ? e.id : undefined])).toEqual([['permission', 'budget']]);
      const listed = await drain(provider.listExistingIds(ctx, driveResource));
      const now = listed.find((d) => d.id === 'budget')!;
      expect(now.contentHash).not.toBe(before.contentHash);
      const [fetched, ...others] = await drain(provider.fetchDocuments(ctx, driveResource, ['budget', 'old', 'photo']));
      expect(fetched).toMatchObject({ kind: 'upsert', doc: { id: 'budget', contentHash: now.contentHash, updatedAt: '2020-01-01T00:00:00.000Z' } });
      expect(textOf((fetched as Extract<SyncEvent, { kind: 'upsert' }>).doc)).toBe('item,cost\nrestored,1');
      expect(others).toEqual([{ kind: 'delete', id: 'old' }, { kind: 'delete', id: 'photo' }]);
    });

    it('an edit made while the first sync lists the drive is read again by the feed in the same sync', async () => {
      seedDrive(fake);
      const provider = make({ pageSize: 2 });
      // requests: drives.get, the drive's members, startPageToken, listing page 1 (budget and photo), budget's bytes
      // and grants, listing page 2 (plan), plan's export: the edit lands right after plan was read
      fake.switches.afterRequests(8, () => fake.editFile('plan', '# Plan\n\nShip the kestrel survey, then the owl count.'));
      const events = await drain(provider.sync(ctx, driveResource, null));
      const plans = upserts(events).filter((d) => d.id === 'plan');
      expect(plans.map(textOf)).toEqual(['# Plan\n\nShip the kestrel survey.', '# Plan\n\nShip the kestrel survey, then the owl count.']);
    });

    it('a folder resource holds its subfolders: a file moved out is no longer listed, a folder moved in is read whole, a subfolder moved out is forgotten', async () => {
      fake.addFile({ id: 'proj', name: 'Project', mimeType: FOLDER_MIME, parents: [fake.myDriveRoot] }, '', [ADA]);
      fake.addFile({ id: 'sub', name: 'Sub', mimeType: FOLDER_MIME, parents: ['proj'] });
      fake.addFile({ id: 'a', name: 'a.md', mimeType: 'text/markdown', parents: ['proj'] }, '# A');
      fake.addFile({ id: 'b', name: 'b.txt', parents: ['sub'] }, 'B');
      fake.addFile({ id: 'elsewhere', name: 'Elsewhere', mimeType: FOLDER_MIME, parents: [fake.myDriveRoot] });
      fake.addFile({ id: 'c', name: 'c.txt', parents: ['elsewhere'] }, 'C');
      const provider = make();
      const first = await drain(provider.sync(ctx, folderResource('proj'), null));
      // Both have the folder's readers only, and carry them as their own permission.
      expect(upserts(first).map((d) => [d.id, d.permission])).toEqual([
        ['a', { status: 'captured', acl: ['user_email:ada@example.test'] }],
        ['b', { status: 'captured', acl: ['user_email:ada@example.test'] }],
      ]);
      fake.advanceClock(HOUR);
      fake.moveFile('b', 'elsewhere');
      fake.moveFile('elsewhere', 'proj');
      const second = await drain(provider.sync(ctx, folderResource('proj'), lastCursor(first)));
      // b's own move lands outside the resource; then `elsewhere` comes in, and b and c with it.
      expect(second.filter((e) => e.kind !== 'checkpoint').map((e) => `${e.kind} ${e.kind === 'upsert' ? e.doc.id : e.kind === 'permission' ? e.id : ''}`)).toEqual(['upsert b', 'upsert c']);
      expect((await drain(provider.listExistingIds(ctx, folderResource('proj')))).map((d) => d.id).sort()).toEqual(['a', 'b', 'c']);
      fake.advanceClock(HOUR);
      fake.moveFile('elsewhere', fake.myDriveRoot);
      fake.moveFile('a', fake.myDriveRoot);
      const third = await drain(provider.sync(ctx, folderResource('proj'), lastCursor(second)));
      expect(third.filter((e) => e.kind !== 'checkpoint')).toEqual([]);
      expect((await drain(provider.listExistingIds(ctx, folderResource('proj')))).map((d) => d.id)).toEqual([]);
      // What changes in a folder that left the resource is no business of the resource's any more.
      fake.advanceClock(HOUR);
      fake.editFile('c', 'C, edited');
      expect((await drain(provider.sync(ctx, folderResource('proj'), lastCursor(third)))).filter((e) => e.kind !== 'checkpoint')).toEqual([]);
      // A new grant on the resource's folder: its readers are read again and every file under it captured again.
      fake.addFile({ id: 'd', name: 'd.txt', parents: ['sub'] }, 'D');
      fake.addFile({ id: 'e', name: 'e.txt', parents: ['proj'] }, 'E', [{ id: 'perm-bob', type: 'user', role: 'reader', emailAddress: 'bob@example.test' }]);
      const cursor = lastCursor(await drain(provider.sync(ctx, folderResource('proj'), lastCursor(third))));
      fake.share('proj', { id: 'perm-grace', type: 'user', role: 'reader', emailAddress: 'grace@example.test' });
      expect((await drain(provider.sync(ctx, folderResource('proj'), cursor))).filter((e) => e.kind !== 'checkpoint')).toEqual([
        { kind: 'permission', id: 'e', permission: { status: 'captured', acl: ['user_email:ada@example.test', 'user_email:bob@example.test', 'user_email:grace@example.test'] } },
        { kind: 'permission', id: 'd', permission: { status: 'captured', acl: ['user_email:ada@example.test', 'user_email:grace@example.test'] } },
      ]);
      await expect(provider.capturePermissions(ctx, folderResource('proj'))).resolves.toEqual({ status: 'captured', acl: ['user_email:ada@example.test', 'user_email:grace@example.test'] });
    });

    it('a trashed folder, a deleted shared drive and a resource type Drive has not are errors of the resource', async () => {
      seedDrive(fake);
      fake.addFile({ id: 'proj', name: 'Project', mimeType: FOLDER_MIME, parents: [fake.myDriveRoot] });
      const provider = make();
      const cursor = lastCursor(await drain(provider.sync(ctx, folderResource('proj'), null)));
      fake.trashFile('proj');
      expect((await syncUntilError(provider, ctx, folderResource('proj'), cursor)).error).toBeInstanceOf(ResourceGoneError);
      expect((await syncUntilError(provider, ctx, folderResource('proj'), null)).error).toBeInstanceOf(ResourceGoneError);
      expect((await syncUntilError(provider, ctx, folderResource('budget'), null)).error).toBeInstanceOf(ConfigurationError);
      expect((await syncUntilError(provider, ctx, { resourceId: DRIVE, resourceType: 'team_drive', name: 'x' }, null)).error).toBeInstanceOf(ConfigurationError);
      expect((await syncUntilError(provider, ctx, { ...driveResource, resourceId: '0ANoSuchDrive' }, null)).error).toBeInstanceOf(ResourceGoneError);
      await expect(drain(provider.listExistingIds(ctx, { ...driveResource, resourceId: '0ANoSuchDrive' }))).rejects.toBeInstanceOf(ResourceGoneError);
    });

    it('a file larger than the limit is a failure event without a download; the rest of the drive syncs', async () => {
      seedDrive(fake);
      fake.editFile('budget', `item,cost\n${'heron hide,10\n'.repeat(10)}`);
      const events = await drain(make({ maxDocumentBytes: 100 }).sync(ctx, driveResource, null));
      expect(events.filter((e) => e.kind === 'failure')).toEqual([{ kind: 'failure', id: 'budget', error: expect.any(DocumentError) }]);
      expect(upserts(events).map((d) => d.id)).toEqual(['plan']);
      expect(fake.switches.requests.filter((r) => r.includes('/files/budget?alt=media'))).toEqual([]);
    });
    it('bytes are counted as they stream: a download or an export past the limit fails at the limit, without waiting for the rest', async () => {
      seedDrive(fake);
      const big = `item,cost\n${'heron hide,10\n'.repeat(20)}`;
      fake.editFile('budget', big);
      fake.misreportSize('budget', 10);
      fake.stallDownload('budget');
      fake.editFile('plan', `# Plan\n\n${'Ship the kestrel survey. '.repeat(20)}`);
      fake.stallDownload('plan');
      fake.addFile({ id: 'notes', name: 'Notes', mimeType: DOC_MIME, parents: [DRIVE], driveId: DRIVE }, 'short notes');
      const events = await drain(make({ maxDocumentBytes: 100 }).sync(ctx, driveResource, null));
      const failures = events.flatMap((e) => (e.kind === 'failure' ? [[e.id, e.error instanceof DocumentError, e.error.message]] : []));
      expect(failures).toEqual([
        ['budget', true, expect.stringContaining('more than the 100 a document may have')],
        ['plan', true, expect.stringContaining('more than the 100 a document may have')],
      ]);
      expect(upserts(events).map((d) => d.id)).toEqual(['notes']);
    }, 15_000);

    it('a download or export that does not finish within the deadline fails that file; the rest of the drive syncs', async () => {
      seedDrive(fake);
      fake.stallDownload('budget');
      fake.stallDownload('plan');
      fake.addFile({ id: 'notes', name: 'Notes.txt', parents: [DRIVE], driveId: DRIVE }, 'short notes');
      const events = await drain(make({ downloadTimeoutMs: 300 }).sync(ctx, driveResource, null));
      const failures = events.flatMap((e) => (e.kind === 'failure' ? [[e.id, e.error instanceof DocumentError, e.error.message]] : []));
      expect(failures).toEqual([
        ['budget', true, 'Budget.csv (budget) did not arrive within 300 ms; it is tried again at the next sync.'],
        ['plan', true, 'Plan (plan) did not arrive within 300 ms; it is tried again at the next sync.'],
      ]);
      expect(upserts(events).map((d) => [d.id, textOf(d)])).toEqual([['notes', 'short notes']]);
    }, 15_000);
  });

  describe('page guards', () => {
    /** The events of a sync up to its error, or the first `max` of them when it goes on and on. */
    async function firstEvents(events: AsyncIterable<SyncEvent>, max = 200): Promise<{ count: number; error: unknown }> {
      let count = 0;
      try {
        for await (const _ of events) if (++count >= max) return { count, error: undefined };
        return { count, error: undefined };
      } catch (error) {
        return { count, error };
      }
    }
    const caught = (run: Promise<unknown>) => run.then(() => undefined, (error: unknown) => error);

    it.each([
      ['files', 'the listing of shared_drive:0AEngineering'],
      ['changes', 'the changes feed of shared_drive:0AEngineering'],
      ['permissions', `the permissions of ${DRIVE}`],
      ['drives', 'the list of shared drives'],
    ] as const)('a %s listing whose next page token repeats one already asked for stops with a TransientError that names it', async (endpoint, what) => {
      seedDrive(fake);
      const provider = make({ pageSize: 1 });
      const cursor = lastCursor(await drain(provider.sync(ctx, driveResource, null)));
      fake.repeatPageTokens(endpoint);
      const error =
        endpoint === 'files' ? (await firstEvents(provider.sync(ctx, driveResource, null))).error
        : endpoint === 'changes' ? (await firstEvents(provider.sync(ctx, driveResource, cursor))).error
        : endpoint === 'permissions' ? await caught(provider.capturePermissions(ctx, driveResource))
        : await caught(provider.discoverResources(ctx));
      expect(error).toBeInstanceOf(TransientError);
      expect((error as Error).message).toBe(`Google Drive gave a page already read as the next page of ${what}; the listing was stopped there.`);
    }, 15_000);

    it('a listing longer than maxPages pages stops with a ConfigurationError; one of exactly maxPages pages completes', async () => {
      seedDrive(fake);
      const short = await firstEvents(make({ pageSize: 1, maxPages: 2 }).sync(ctx, driveResource, null));
      expect(short.error).toBeInstanceOf(ConfigurationError);
      expect((short.error as Error).message).toBe('The listing of shared_drive:0AEngineering ran past 2 pages, the most the connector reads of one listing; the listing was stopped there.');
      // specs, plan, budget and photo: four pages of one.
      const whole = await syncUntilError(make({ pageSize: 1, maxPages: 4 }), ctx, driveResource, null);
      expect(whole.error).toBeUndefined();
      expect(upserts(whole.events).map((d) => d.id).sort()).toEqual(['budget', 'plan']);
    });
  });

  describe('permission capture', () => {
    it('the resource verdict is the drive\'s members or the folder\'s grants; hidden emails on it leave their count instead of a list', async () => {
      seedDrive(fake);
      fake.addFile({ id: 'proj', name: 'Project', mimeType: FOLDER_MIME, parents: [fake.myDriveRoot] }, '', [ADA, DOMAIN, { id: 'perm-hidden-1', type: 'user', role: 'reader' }, { id: 'perm-hidden-2', type: 'group', role: 'reader' }]);
      const provider = make();
      await expect(provider.capturePermissions(ctx, driveResource)).resolves.toEqual({ status: 'captured', acl: ['user_email:org@example.test'] });
      await expect(provider.capturePermissions(ctx, folderResource('proj'))).resolves.toEqual({ status: 'captured', acl: null, unresolved: 2 });
    });

    it('a file with a hidden grant carries the count instead of a list (the API rule governs it); link-only sharing grants nothing', async () => {
      fake.addFile({ id: 'proj', name: 'Project', mimeType: FOLDER_MIME, parents: [fake.myDriveRoot] });
      fake.addFile({ id: 'hidden', name: 'hidden.txt', parents: ['proj'] }, 'h', [ADA, { id: 'perm-hidden', type: 'user', role: 'writer' }]);
      fake.addFile({ id: 'link', name: 'link.txt', parents: ['proj'] }, 'l', [ADA, { id: 'anyoneWithLink', type: 'anyone', role: 'reader', allowFileDiscovery: false }]);
      const docs = upserts(await drain(make().sync(ctx, folderResource('proj'), null)));
      expect(docs.map((d) => [d.id, d.permission])).toEqual([
        ['hidden', { status: 'captured', acl: null, unresolved: 1 }],
        ['link', { status: 'captured', acl: ['user_email:ada@example.test'] }],
      ]);
    });
  });

  describe('throttling, server errors and revoked credentials', () => {
    it('Retry-After is read by the shared reader: fractional seconds count as given', async () => {
      seedDrive(fake);
      const provider = make();
      const cursor = lastCursor(await drain(provider.sync(ctx, driveResource, null)));
      fake.throttle('/drive/v3/changes', { retryAfter: '2.5' });
      const started = Date.now();
      const { error } = await syncUntilError(provider, ctx, driveResource, cursor);
      const finished = Date.now();
      expect(error).toBeInstanceOf(RateLimitedError);
      const at = (error as RateLimitedError).retryAt.getTime();
      expect([at >= started + 2500, at <= finished + 2500]).toEqual([true, true]);
    });

    it('a 429 with Retry-After, or a 403 rate limit without one, becomes a RateLimitedError at once: the client does not wait', async () => {
      seedDrive(fake);
      const provider = make();
      const cursor = lastCursor(await drain(provider.sync(ctx, driveResource, null)));
      fake.throttle('/drive/v3/changes', { retryAfter: '120' });
      let started = Date.now();
      const throttled = await syncUntilError(provider, ctx, driveResource, cursor);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(throttled.error).toBeInstanceOf(RateLimitedError);
      const wait = (throttled.error as RateLimitedError).retryAt.getTime() - started;
      expect(wait).toBeGreaterThanOrEqual(119_000);
      expect(wait).toBeLessThanOrEqual(121_000 + (Date.now() - started));
      fake.throttle('/drive/v3/changes', { status: 403 });
      started = Date.now();
      const quota = await syncUntilError(provider, ctx, driveResource, cursor);
      expect((quota.error as RateLimitedError).retryAt.getTime() - started).toBeGreaterThanOrEqual(59_000);
      expect((quota.error as RateLimitedError).message).toMatch(/userRateLimitExceeded/);
      expect(fake.switches.requests.filter((r) => r.startsWith('GET /drive/v3/changes?'))).toHaveLength(3);
    });

    it('a short burst of 5xx is retried by the client; a longer one is a TransientError', async () => {
      seedDrive(fake);
      const provider = make();
      const cursor = lastCursor(await drain(provider.sync(ctx, driveResource, null)));
      const from = fake.switches.requests.length;
      fake.switches.failNext(2, 503);
      expect((await syncUntilError(provider, ctx, driveResource, cursor)).error).toBeUndefined();
      expect(paths(fake, from)).toEqual(['GET /drive/v3/changes', 'GET /drive/v3/changes', 'GET /drive/v3/changes']);
      fake.switches.failNext(4, 500);
      expect((await syncUntilError(provider, ctx, driveResource, cursor)).error).toBeInstanceOf(TransientError);
    });

    it('a token revoked mid-sync ends it with an AuthError; what came before its last checkpoint stands', async () => {
      seedDrive(fake);
      // requests: drives.get, the drive's members, startPageToken, listing page 1, budget's bytes and grants; the next
      // page is refused
      fake.switches.afterRequests(6, () => fake.switches.revokeToken(fake.token));
      const { events, error } = await syncUntilError(make({ pageSize: 2 }), ctx, driveResource, null);
      expect(error).toBeInstanceOf(AuthError);
      expect((error as Error).message).toMatch(/refused the connector's credentials .* Set new credentials/);
      expect(events.map((e) => e.kind)).toEqual(['upsert', 'checkpoint']);
    });

    it('a service account key deleted mid-sync ends it with an AuthError once its token is refused', async () => {
      seedDrive(fake);
      const key = fake.serviceAccountKey();
      fake.switches.afterRequests(4, () => fake.revokeServiceAccountKey());
      const { error } = await syncUntilError(make({ pageSize: 2 }), { credentials: { service_account_key: key } }, driveResource, null);
      expect(error).toBeInstanceOf(AuthError);
    });
  });

  it('property: for random grants on a folder and its files and a random API rule, what a caller retrieves is what Drive lets them find, under rule 12', async () => {
    const provider = make();
    const users = ['ada@example.test', 'bob@example.test', 'cy@other.test'];
    const groups = ['eng@example.test', 'ops@other.test'];
    const grant = fc.oneof(
      fc.constantFrom(...users).map((emailAddress): DrivePermission => ({ type: 'user', role: 'reader', emailAddress })),
      fc.constantFrom(...groups).map((emailAddress): DrivePermission => ({ type: 'group', role: 'reader', emailAddress })),
      fc.record({ domain: fc.constantFrom('example.test', 'other.test'), allowFileDiscovery: fc.boolean() }).map((d): DrivePermission => ({ type: 'domain', role: 'reader', ...d })),
      fc.boolean().map((allowFileDiscovery): DrivePermission => ({ type: 'anyone', role: 'reader', allowFileDiscovery })),
      fc.constantFrom<DrivePermission>({ type: 'user', role: 'reader' }, { type: 'group', role: 'reader' }),
    );
    const grants = (max: number) => fc.uniqueArray(grant, { maxLength: max, selector: (g) => JSON.stringify(g) });
    const callers = [...users.map((email) => ({ email, groups: [] as string[] })), { email: 'dee@example.test', groups: ['eng@example.test'] }, { email: 'eve@other.test', groups: ['ops@other.test'] }];
    type Caller = (typeof callers)[number];

    /** Who Drive lets find a file with these grants: discoverable grants only; hidden emails counted, not named. */
    const audience = (gs: DrivePermission[]) => ({
      public: gs.some((g) => g.type === 'anyone' && g.allowFileDiscovery),
      hidden: gs.filter((g) => (g.type === 'user' || g.type === 'group') && !g.emailAddress).length,
      named: [...new Set(gs.flatMap((g) => (g.type === 'user' || g.type === 'group' ? [`${g.type}:${g.emailAddress}`] : g.type === 'domain' && g.allowFileDiscovery ? [`domain:${g.domain}`] : [])))].sort(),
    });
    const finds = (gs: DrivePermission[], c: Caller) => audience(gs).public || gs.some((g) => (g.type === 'user' && g.emailAddress === c.email) || (g.type === 'group' && c.groups.includes(g.emailAddress!)) || (g.type === 'domain' && g.allowFileDiscovery && c.email.endsWith(`@${g.domain}`)));
    const sameAudience = (a: DrivePermission[], b: DrivePermission[]) => {
      const [x, y] = [audience(a), audience(b)];
      return x.public === y.public && (x.public || (x.hidden === y.hidden && JSON.stringify(x.named) === JSON.stringify(y.named)));
    };

    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(grants(3), { minLength: 1, maxLength: 4 }),
        grants(2),
        fc.option(fc.constantFrom(['__public__'], ['user_email:bob@example.test'], ['domain:other.test']), { nil: undefined }),
        async (fileGrants, folderGrants, apiRule) => {
          const folder = `folder-${++run}`;
          fake.addFile({ id: folder, name: folder, mimeType: FOLDER_MIME, parents: [fake.myDriveRoot] }, '', folderGrants.map((g, i) => ({ ...g, id: `${folder}-g${i}` })));
          fileGrants.forEach((gs, i) => fake.addFile({ id: `${folder}-f${i}`, name: `f${i}.txt`, parents: [folder] }, `file ${i}`, gs.map((g, j) => ({ ...g, id: `${folder}-f${i}-g${j}` }))));
          const docs = upserts(await drain(provider.sync(ctx, folderResource(folder), null)));
          const verdict = await provider.capturePermissions(ctx, folderResource(folder));
          expect(docs).toHaveLength(fileGrants.length);
          const api = (c: Caller) => isVisible([...apiRule!], callerPrincipals([c.email, ...c.groups.map((g) => `group:google:${g}`)]));
          /**
           * Rule 11 and 12 over the source: a file whose readers are its folder's follows the folder's verdict (public
           * yields to an API rule); any other follows its own readers. Readers that cannot all be named (hidden
           * emails) hand the decision to the API rule, and with none nobody retrieves the file.
           */
          const expected = (inForce: DrivePermission[], c: Caller) => {
            const byResource = sameAudience(inForce, folderGrants);
            const { public: open, hidden } = audience(inForce);
            if (open) return byResource && apiRule !== undefined ? api(c) : true;
            if (hidden > 0) return apiRule !== undefined ? api(c) : false;
            return finds(inForce, c);
          };
          for (const doc of docs) {
            const inForce = [...fileGrants[Number(doc.id.split('-f')[1])], ...folderGrants];
            expect(doc.permission).toBeDefined();
            const access = effectiveAccess({ document: doc.permission!, resource: verdict, apiRule });
            // Without the resource's verdict (its capture turned off or not yet read) the file's own permission still holds.
            const alone = effectiveAccess({ document: doc.permission!, resource: { status: 'off' }, apiRule: undefined });
            for (const caller of callers) {
              const principals = callerPrincipals([caller.email, ...caller.groups.map((g) => `group:google:${g}`)]);
              const retrieves = isVisible(access.acl, principals);
              expect([doc.id, caller.email, retrieves]).toEqual([doc.id, caller.email, expected(inForce, caller)]);
              // Never more than Drive allows, unless the operator's API rule says so.
              if (apiRule === undefined && retrieves) expect(finds(inForce, caller)).toBe(true);
              expect([doc.id, caller.email, isVisible(alone.acl, principals)]).toEqual([doc.id, caller.email, audience(inForce).public || (audience(inForce).hidden === 0 && finds(inForce, caller))]);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('google drive connector through HTTP: who retrieves what as grants change in the drive', () => {
  let t: TestApp;
  let fake: DriveFake;
  let connectorId: string;

  const status = async () => (await t.request('GET', `/connectors/${connectorId}/status`)).body.data;
  const syncNow = async () => {
    const at = new Date();
    expect((await t.request('POST', `/connectors/${connectorId}/sync`)).status).toBe(202);
    for (let i = 0; i < 400; i++) {
      const s = await status();
      if (s.resources.every((r: any) => r.last_sync?.outcome === 'completed' && new Date(r.last_sync.ended_at) >= at) && !s.resources.some((r: any) => r.syncing)) return s;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`not synced: ${JSON.stringify(await status())}`);
  };
  const searchable = async () => {
    for (let i = 0; i < 400; i++) {
      const [{ n }] = await t.ds.query(`SELECT count(*)::int AS n FROM rm_items WHERE connector_id = $1 AND status NOT IN ('graph_creation', 'completed')`, [connectorId]);
      if (n === 0) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('synced items did not become searchable');
  };
  /** The external ids of the synced files a caller with these `acl` principals retrieves for `words`. */
  const retrieves = async (acl: string[], words: string): Promise<string[]> => {
    const res = await t.request('POST', '/query', { body: { database: 'drive', query: words, query_by: 'text', query_apps: true, max_results: 50, acl } });
    expect(res.status).toBe(200);
    const itemIds: string[] = [...new Set<string>(res.body.data.chunks.map((c: any) => c.id))];
    if (!itemIds.length) return [];
    const rows: { external_id: string }[] = await t.ds.query(`SELECT external_id FROM rm_items WHERE item_id = ANY($1) AND connector_id = $2 ORDER BY external_id`, [itemIds, connectorId]);
    return rows.map((r) => r.external_id);
  };
  const itemEvents = async (type: string) => (await t.store.readAll({ maxCount: 100_000 })).filter((e) => e.type === type);
  const WORDS = 'quarterly osprey ledger';

  beforeAll(async () => {
    fake = new DriveFake();
    await fake.start();
    fake.addDrive(DRIVE, 'Engineering', [ORGANIZER]);
    const file = (id: string, grants: DrivePermission[]) => fake.addFile({ id, name: `${id}.txt`, parents: [DRIVE], driveId: DRIVE }, `The ${WORDS} for ${id}.`, grants);
    file('by-domain', [DOMAIN]);
    file('by-user', [ADA]);
    file('by-group', [{ id: 'perm-eng', type: 'group', role: 'reader', emailAddress: 'eng@example.test' }]);
    file('by-link', [{ id: 'anyoneWithLink', type: 'anyone', role: 'reader', allowFileDiscovery: false }, { id: 'perm-bob', type: 'user', role: 'reader', emailAddress: 'bob@other.test' }]);
    file('public', [{ id: 'anyone', type: 'anyone', role: 'reader', allowFileDiscovery: true }]);
    t = await startTestApp('gdrive_acl', { connectors: { ...configFromEnv({}, 'postgres://unused').connectors, allowPrivateNetworks: true, pollMs: 50 } });
    t.get(tokens.CONNECTOR_PROVIDERS).register(new GoogleDriveProvider({ allowPrivateNetworks: true, apiUrl: fake.url, maxRetryDelayMs: 20 }));
    await t.createDatabase('drive');
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await fake?.stop();
  });

  it('GET /connectors/providers describes google_drive: its secret credentials, filterable fields and option', async () => {
    const described = await t.request('GET', '/connectors/providers?id=google_drive');
    expect(described.status).toBe(200);
    expect(described.body.data.providers).toEqual([
      {
        id: 'google_drive',
        name: 'Google Drive',
        credential_fields: [
          expect.objectContaining({ name: 'service_account_key', required: false, secret: true }),
          expect.objectContaining({ name: 'subject', required: false, secret: false }),
          expect.objectContaining({ name: 'access_token', required: false, secret: true }),
        ],
        filterable_fields: ['mime_type', 'folder_id', 'drive_id', 'modified_time'].map((name) => expect.objectContaining({ name })),
        resource_options: [expect.objectContaining({ name: 'page_size' })],
        captures_permissions: true,
      },
    ]);
  });

  it('a connector created with a service account key syncs the shared drive; each file is retrieved by exactly the principals its grants name', async () => {
    const created = await t.request('POST', '/connectors', { body: { provider: 'google_drive', database: 'drive', credentials: { service_account_key: fake.serviceAccountKey() } } });
    expect(created.status).toBe(201);
    expect(JSON.stringify(created.body)).not.toContain('PRIVATE KEY');
    connectorId = created.body.data.connector_id;
    const discovered = (await t.request('GET', `/connectors/${connectorId}/discover`)).body.data.resources;
    expect(discovered.map((r: any) => [r.resource_type, r.resource_id])).toEqual([['shared_drive', DRIVE]]);
    expect((await t.request('POST', `/connectors/${connectorId}/configure`, { body: { resources: [{ resource_id: DRIVE, resource_type: 'shared_drive', name: 'Engineering' }] } })).status).toBe(200);
    await syncNow();
    await searchable();
    expect(await retrieves(['carol@example.test'], WORDS)).toEqual(['by-domain', 'public']);
    expect(await retrieves(['ada@example.test'], WORDS)).toEqual(['by-domain', 'by-user', 'public']);
    expect(await retrieves(['dan@elsewhere.test', 'group:google:eng@example.test'], WORDS)).toEqual(['by-group', 'public']);
    expect(await retrieves(['bob@other.test'], WORDS)).toEqual(['by-link', 'public']);
    expect(await retrieves(['dan@elsewhere.test'], WORDS)).toEqual(['public']);
    expect(await retrieves(['org@example.test'], WORDS)).toEqual(['by-domain', 'by-group', 'by-link', 'by-user', 'public']);
  });

  it('a file unshared in the drive disappears from results after the next sync (not before), with no download and no new version', async () => {
    const [before] = await t.ds.query(`SELECT content_version, content_sha256 FROM rm_items WHERE connector_id = $1 AND external_id = 'by-user'`, [connectorId]);
    const ingested = (await itemEvents('ItemIngested')).length;
    fake.advanceClock(HOUR);
    fake.unshare('by-user', 'perm-ada');
    const from = fake.switches.requests.length;
    expect(await retrieves(['ada@example.test'], WORDS)).toContain('by-user');
    await syncNow();
    expect(await retrieves(['ada@example.test'], WORDS)).toEqual(['by-domain', 'public']);
    expect(fake.switches.requests.slice(from).filter((r) => r.includes('/files/by-user?alt=media'))).toEqual([]);
    expect((await itemEvents('ItemIngested')).length).toBe(ingested);
    const [after] = await t.ds.query(`SELECT content_version, content_sha256, provider_permission FROM rm_items WHERE connector_id = $1 AND external_id = 'by-user'`, [connectorId]);
    // Its readers are now the drive's members, which it carries as its own permission.
    expect(after).toMatchObject({ ...before, provider_permission: { status: 'captured', acl: ['user_email:org@example.test'] } });
    expect((await itemEvents('ProviderPermissionChanged')).map((e) => (e.data as { permission?: unknown }).permission)).toEqual([{ status: 'captured', acl: ['user_email:org@example.test'] }]);
  });

  it('a file shared with someone new reaches them on the next sync, not before', async () => {
    fake.advanceClock(HOUR);
    fake.share('by-group', { id: 'perm-erin', type: 'user', role: 'commenter', emailAddress: 'erin@elsewhere.test' });
    expect(await retrieves(['erin@elsewhere.test'], WORDS)).toEqual(['public']);
    await syncNow();
    expect(await retrieves(['erin@elsewhere.test'], WORDS)).toEqual(['by-group', 'public']);
  });

  it('back-dated times: an edit saved with an old modification time and a file uploaded with one are both synced by the next sync', async () => {
    fake.advanceClock(HOUR);
    fake.editFile('public', 'The heron census, restored from an old copy.', '2020-01-01T00:00:00.000Z');
    fake.addFile({ id: 'archive', name: 'archive.txt', parents: [DRIVE], driveId: DRIVE, modifiedTime: '2019-06-01T00:00:00.000Z' }, 'The heron census archive of 2019.', [{ id: 'anyone', type: 'anyone', role: 'reader', allowFileDiscovery: true }]);
    await syncNow();
    await searchable();
    expect(await retrieves(['dan@elsewhere.test'], 'heron census')).toEqual(['archive', 'public']);
    expect((await status()).status).toBe('healthy');
  });
});
