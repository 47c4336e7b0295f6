import { createHash } from 'node:crypto';
import type { drive_v3 } from '@googleapis/drive';
import { ConfigurationError, ProviderError, ResourceGoneError } from '../../provider-errors';
import type {
  AccountIdentity,
  ConnectorProvider,
  DiscoveredResource,
  ExistingDocument,
  ProviderContext,
  ProviderDescription,
  ResourceConfig,
  ResourcePermission,
  SyncCursor,
  SyncEvent,
} from '../../provider.port';
import { checkTokenUri, driveClient, GOOGLE_API_URL, readCredentials } from './google-drive-auth';
import { CURSOR_VERSION, decodeCursor, encodeCursor, type DriveCursor, type FolderEntry, type WalkPosition } from './google-drive-cursor';
import { contentHash, documentOf, FILE_FIELDS, FOLDER_MIME, isDocument, isFolder, LISTED_FIELDS, parentOf, type DriveFile } from './google-drive-documents';
import { captureOf, type GrantMapping } from './google-drive-permissions';
import { DEFAULT_MAX_PAGES, PageGuard } from './google-drive-pages';
import { DriveSession } from './google-drive-session';

export interface GoogleDriveProviderOptions {
  /**
   * Whether a service account key's token_uri may lead to a loopback, private, link-local or reserved address, and
   * use plain http (CONNECTOR_ALLOW_PRIVATE_NETWORKS; development and tests). Off by default.
   */
  allowPrivateNetworks?: boolean;
  /** The Drive API's origin (default https://www.googleapis.com): an operator setting for tests or a proxy, never a credential. */
  apiUrl?: string;
  /** Files and changes per page (a checkpoint follows each page), unless a resource sets `page_size`; default and most 1000. */
  pageSize?: number;
  /** A file larger than this is a `failure` event instead of a document (default 50 MiB, the upload limit of ingestion). */
  maxDocumentBytes?: number;
  /** How long one file's download or export may take, bytes included; a slower one is a `failure` event (default 2 minutes). */
  downloadTimeoutMs?: number;
  /** How far before the server's time of the last feed read a modification still counts as new content (default 5 minutes). */
  feedLagMs?: number;
  /** Pages one listing (files, changes, grants, shared drives) may take before it is stopped (default 10,000). */
  maxPages?: number;
  /** Attempts after a 5xx or a dropped connection, with gaxios' short backoff (default 3). */
  serverErrorRetries?: number;
  /** The longest pause between those attempts (default 2 s). */
  maxRetryDelayMs?: number;
}

const MAX_PAGE_SIZE = 1000;
/** Folders listed per query of a tree listing (`'a' in parents or 'b' in parents ...`), keeping the query short. */
const FOLDERS_PER_QUERY = 30;
/** The longest chain of parents followed to tell whether a file is inside a folder. */
const MAX_DEPTH = 100;
/** The file fields the crawl reads: a listing's, with creation time and a folder's grant ids. */
const CRAWL_FIELDS = `${FILE_FIELDS},createdTime,permissionIds`;

export const GOOGLE_DRIVE_PROVIDER: ProviderDescription = {
  id: 'google_drive',
  name: 'Google Drive',
  credentialFields: [
    {
      name: 'service_account_key',
      description: 'The JSON key of a Google Cloud service account (the whole key file). Share the folders and shared drives to sync with its email address, or set subject to act as a Workspace user through domain-wide delegation. Give this or access_token.',
      required: false,
      secret: true,
    },
    {
      name: 'subject',
      description: 'With service_account_key: the email address of the Workspace user to act as (domain-wide delegation granted for the drive.readonly scope). Omit to act as the service account itself.',
      required: false,
      secret: false,
    },
    {
      name: 'access_token',
      description: 'An OAuth 2.0 access token with the https://www.googleapis.com/auth/drive.readonly scope. It expires after about an hour, after which syncs fail as unauthorized until a new one is set; a service account key does not. Give this or service_account_key.',
      required: false,
      secret: true,
    },
  ],
  filterableFields: [
    { name: 'mime_type', type: 'string', description: "The file's Drive MIME type (application/vnd.google-apps.document for a Google Doc, application/pdf, ...)." },
    { name: 'folder_id', type: 'string', description: 'The id of the folder the file is in (the shared drive id for a file at the top of a shared drive).' },
    { name: 'drive_id', type: 'string', description: "The shared drive the file is in; null in a user's My Drive." },
    { name: 'modified_time', type: 'date', description: "When the file was last modified, as Drive reports it." },
  ],
  resourceOptions: [{ name: 'page_size', description: 'Files and changes read per request, each page followed by a checkpoint (1 to 1000, default 1000).' }],
  capturesPermissions: true,
};

/** A resource: a shared drive (its id) or a folder (its id; subfolders included). */
type DriveScope = { kind: 'shared_drive'; id: string } | { kind: 'folder'; id: string };

function scopeOf(resource: ResourceConfig): DriveScope {
  if (resource.resourceType === 'shared_drive' || resource.resourceType === 'folder') return { kind: resource.resourceType, id: resource.resourceId };
  throw new ConfigurationError(`resource_type '${resource.resourceType}' is not one Google Drive has: use shared_drive (a shared drive's id) or folder (a folder's id).`);
}

const scopeKey = (scope: DriveScope) => `${scope.kind}:${scope.id}`;

/** A Drive query literal: the id quoted, with quote and backslash escaped. */
const quoted = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** A digest of a folder's grant ids: when it moves, every file under the folder is captured again. */
const grantDigest = (file: DriveFile) => createHash('sha256').update([...(file.permissionIds ?? [])].sort().join(',')).digest('hex').slice(0, 16);

/** When a file last changed its content as far as its times tell: the later of its modification and creation. */
const contentTime = (file: DriveFile) => Math.max(Date.parse(file.modifiedTime ?? '') || 0, Date.parse(file.createdTime ?? '') || 0);

/** The changes feed read: a shared drive's (its items only), or the account's own without other drives' items. */
const feedScope = (driveId: string | null) => (driveId ? { driveId, includeItemsFromAllDrives: true } : { includeItemsFromAllDrives: false });

/**
 * The Google Drive provider (docs/providers/google_drive.md): shared drives and folders as resources, the files in
 * them as documents, each with its own grants as its per-document permission; incremental syncs read Drive's changes
 * feed.
 */
export class GoogleDriveProvider implements ConnectorProvider {
  readonly description = GOOGLE_DRIVE_PROVIDER;
  private readonly allowPrivateNetworks: boolean;
  private readonly apiUrl: string;
  private readonly pageSize: number;
  private readonly maxDocumentBytes: number;
  private readonly feedLagMs: number;
  private readonly downloadTimeoutMs: number;
  private readonly maxPages: number;
  private readonly serverErrorRetries: number;
  private readonly maxRetryDelayMs: number;

  constructor(options: GoogleDriveProviderOptions = {}) {
    this.allowPrivateNetworks = options.allowPrivateNetworks ?? false;
    this.apiUrl = options.apiUrl ?? GOOGLE_API_URL;
    this.pageSize = Math.min(options.pageSize ?? MAX_PAGE_SIZE, MAX_PAGE_SIZE);
    this.maxDocumentBytes = options.maxDocumentBytes ?? 50 * 1024 * 1024;
    this.feedLagMs = options.feedLagMs ?? 5 * 60_000;
    this.downloadTimeoutMs = options.downloadTimeoutMs ?? 120_000;
    this.maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
    this.serverErrorRetries = options.serverErrorRetries ?? 3;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 2000;
  }

  /** A session on the credentials; a service account key's token_uri is checked before any call. */
  private async session(ctx: ProviderContext): Promise<DriveSession> {
    const creds = readCredentials(ctx.credentials);
    if (creds.kind === 'service_account') await checkTokenUri(creds.key, this.allowPrivateNetworks);
    const api = driveClient(creds, {
      apiUrl: this.apiUrl,
      allowPrivateNetworks: this.allowPrivateNetworks,
      serverErrorRetries: this.serverErrorRetries,
      maxRetryDelayMs: this.maxRetryDelayMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return new DriveSession(api, ctx.signal, { maxDocumentBytes: this.maxDocumentBytes, downloadTimeoutMs: this.downloadTimeoutMs, maxPages: this.maxPages });
  }

  private pageSizeOf(resource: ResourceConfig): number {
    const value = resource.options?.page_size;
    if (value === undefined) return this.pageSize;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_PAGE_SIZE) throw new ConfigurationError(`page_size must be a whole number from 1 to ${MAX_PAGE_SIZE}.`);
    return value;
  }

  async validateCredentials(ctx: ProviderContext): Promise<AccountIdentity> {
    const creds = readCredentials(ctx.credentials);
    const session = await this.session(ctx);
    const about = await session.about();
    const email = about.user?.emailAddress ?? (creds.kind === 'service_account' ? (creds.subject ?? creds.key.clientEmail) : 'unknown');
    const warnings = creds.kind === 'access_token' ? ['An access token expires after about an hour; syncs then fail as unauthorized until a new one is set. A service account key keeps working.'] : [];
    return { accountScope: email.toLowerCase(), displayName: about.user?.displayName ? `${about.user.displayName} <${email}>` : email, warnings };
  }

  /** The shared drives the account is a member of, and the folders at the top of its My Drive or shared with it. */
  async discoverResources(ctx: ProviderContext): Promise<DiscoveredResource[]> {
    const session = await this.session(ctx);
    const out: DiscoveredResource[] = [];
    const drives = new PageGuard('the list of shared drives', this.maxPages);
    let pageToken: string | undefined;
    do {
      const page = await session.drives(pageToken);
      for (const d of page.drives ?? []) out.push({ resourceId: d.id!, resourceType: 'shared_drive', name: d.name ?? d.id!, details: { drive_id: d.id } });
      pageToken = drives.next(pageToken, page.nextPageToken);
    } while (pageToken);
    const folders = new PageGuard('the list of top folders', this.maxPages);
    do {
      const { data } = await session.listFiles('listing folders', {
        q: `mimeType = ${quoted(FOLDER_MIME)} and trashed = false and ('root' in parents or sharedWithMe)`,
        corpora: 'user',
        pageSize: MAX_PAGE_SIZE,
        pageToken,
        fields: 'nextPageToken,files(id,name,webViewLink,driveId,sharedWithMeTime)',
      });
      for (const f of data.files ?? []) {
        out.push({ resourceId: f.id!, resourceType: 'folder', name: f.name ?? f.id!, details: { folder_id: f.id, web_view_link: f.webViewLink ?? null, shared_with_me: !!f.sharedWithMeTime } });
      }
      pageToken = folders.next(pageToken, data.nextPageToken);
    } while (pageToken);
    return out;
  }

  /**
   * The resource's readers (the shared drive's members, or the folder's grants), which every file in it inherits: the
   * verdict of the files that add no reader of their own. Members whose email Drive hides leave no list but their
   * count (`acl` null, `unresolved`): the resource's API rule then governs those files, and the status says so.
   */
  async capturePermissions(ctx: ProviderContext, resource: ResourceConfig): Promise<ResourcePermission> {
    const scope = scopeOf(resource);
    const session = await this.session(ctx);
    return captureOf(await session.readers(scope.id));
  }

  async *listExistingIds(ctx: ProviderContext, resource: ResourceConfig): AsyncIterable<ExistingDocument> {
    const scope = scopeOf(resource);
    const session = await this.session(ctx);
    const pageSize = this.pageSizeOf(resource);
    const driveId = scope.kind === 'shared_drive' ? scope.id : null;
    const guard = new PageGuard(`the listing of ${scopeKey(scope)}`, this.maxPages);
    let position: WalkPosition | null = scope.kind === 'shared_drive' ? { kind: 'drive', pageToken: null } : { kind: 'tree', pending: [], batch: [scope.id], pageToken: null };
    while (position) {
      const { files, next } = await walkPage(session, position, driveId, LISTED_FIELDS, pageSize, guard);
      for (const f of files) if (isDocument(f) && !f.trashed) yield { id: f.id!, contentHash: contentHash(f) };
      position = next;
    }
  }

  async *sync(ctx: ProviderContext, resource: ResourceConfig, cursor: SyncCursor | null): AsyncIterable<SyncEvent> {
    const scope = scopeOf(resource);
    const session = await this.session(ctx);
    const crawl = new Crawl(session, scope, this.pageSizeOf(resource), this.feedLagMs, this.maxPages);
    yield* crawl.run(decodeCursor(cursor, scopeKey(scope)));
  }

  /** Reads the given files again: an upsert for each that is still a document of the resource, a delete for the others. */
  async *fetchDocuments(ctx: ProviderContext, resource: ResourceConfig, ids: readonly string[]): AsyncIterable<SyncEvent> {
    const scope = scopeOf(resource);
    const session = await this.session(ctx);
    const crawl = new Crawl(session, scope, this.pageSizeOf(resource), this.feedLagMs, this.maxPages);
    crawl.readers = await session.readers(scope.id);
    const ancestry = new Map<string, boolean>([[scope.id, true]]);
    for (const id of ids) {
      const file = await session.fileIfVisible(id, CRAWL_FIELDS);
      const inside = file !== null && !file.trashed && isDocument(file) && (scope.kind === 'shared_drive' ? file.driveId === scope.id : await isUnder(session, parentOf(file), scope.id, ancestry));
      if (!inside) yield { kind: 'delete', id };
      else yield* crawl.read(file);
    }
  }
}

/** Whether `folderId` is `rootId` or inside it, following parents (memoized in `known`). */
async function isUnder(session: DriveSession, folderId: string | null, rootId: string, known: Map<string, boolean>): Promise<boolean> {
  const chain: string[] = [];
  let current = folderId;
  let answer = false;
  while (current !== null && chain.length < MAX_DEPTH) {
    const memo = known.get(current);
    if (memo !== undefined) {
      answer = memo;
      break;
    }
    chain.push(current);
    const folder = await session.fileIfVisible(current, 'id,parents,trashed');
    if (folder === null || folder.trashed) break;
    current = parentOf(folder);
  }
  for (const id of chain) known.set(id, answer);
  return answer;
}

/**
 * One page of a listing and the position after it. A shared drive is one query over the drive; a folder tree is
 * listed breadth first, the folders a page shows queued for later queries, a batch of folders per query.
 */
async function walkPage(session: DriveSession, position: WalkPosition, driveId: string | null, fields: string, pageSize: number, guard: PageGuard): Promise<{ files: DriveFile[]; next: WalkPosition | null }> {
  if (position.kind === 'drive') {
    const { data } = await session.listFiles(`listing shared drive ${driveId}`, { q: 'trashed = false', corpora: 'drive', driveId: driveId!, pageSize, pageToken: position.pageToken ?? undefined, fields: `nextPageToken,files(${fields})` });
    const files = data.files ?? [];
    const nextToken = guard.next(position.pageToken, data.nextPageToken, 'drive');
    return { files, next: nextToken ? { kind: 'drive', pageToken: nextToken } : null };
  }
  const q = `(${position.batch.map((id) => `${quoted(id)} in parents`).join(' or ')}) and trashed = false`;
  const { data } = await session.listFiles(`listing folder ${position.batch[0]}${position.batch.length > 1 ? ` and ${position.batch.length - 1} more` : ''}`, {
    q,
    // A folder's drive is known once a sync has read the folder; a listing on its own asks every corpus.
    ...(driveId ? { corpora: 'drive', driveId } : { corpora: 'allDrives' }),
    pageSize,
    pageToken: position.pageToken ?? undefined,
    fields: `nextPageToken,files(${fields})`,
  });
  const files = data.files ?? [];
  const pending = [...position.pending, ...files.filter(isFolder).map((f) => f.id!)];
  const nextToken = guard.next(position.pageToken, data.nextPageToken, q);
  if (nextToken) return { files, next: { kind: 'tree', pending, batch: position.batch, pageToken: nextToken } };
  if (pending.length === 0) return { files, next: null };
  return { files, next: { kind: 'tree', pending: pending.slice(FOLDERS_PER_QUERY), batch: pending.slice(0, FOLDERS_PER_QUERY), pageToken: null } };
}

/**
 * One sync of one resource: the first one lists the resource, every one then reads the changes feed (the cursor's
 * notes say how a content change is told from a permission-only one). Deletions, trashing and files leaving the
 * resource are not acted on here: the listing the engine takes before the crawl no longer has them, and pruning deletes
 * them behind the mass-deletion guard.
 */
class Crawl {
  /** the resource's readers, against which a file public as its resource is told (the cursor's, or read for the call) */
  readers: GrantMapping = { acl: null, unresolved: 0 };

  constructor(
    private readonly session: DriveSession,
    private readonly scope: DriveScope,
    private readonly pageSize: number,
    private readonly feedLagMs: number,
    private readonly maxPages: number,
  ) {}

  private get driveScoped(): boolean {
    return this.scope.kind === 'shared_drive';
  }

  async *run(saved: DriveCursor | null): AsyncGenerator<SyncEvent> {
    const cursor = saved ?? (await this.start());
    this.readers = cursor.readers;
    const listing = new PageGuard(`the listing of ${scopeKey(this.scope)}`, this.maxPages);
    while (cursor.walk) {
      const { files, next } = await walkPage(this.session, cursor.walk, cursor.feedDriveId, CRAWL_FIELDS, this.pageSize, listing);
      for (const f of files) {
        if (f.trashed) continue;
        if (isFolder(f)) cursor.folders[f.id!] = { p: parentOf(f), g: grantDigest(f) };
        else if (isDocument(f)) yield* this.read(f);
      }
      cursor.walk = next;
      yield { kind: 'checkpoint', cursor: encodeCursor(cursor) };
    }
    const feed = new PageGuard(`the changes feed of ${scopeKey(this.scope)}`, this.maxPages);
    for (;;) {
      const { data, serverTime } = await this.session.changes({ pageToken: cursor.pageToken, pageSize: this.pageSize, fields: `nextPageToken,newStartPageToken,changes(changeType,removed,fileId,driveId,time,file(${CRAWL_FIELDS}))`, ...feedScope(cursor.feedDriveId) });
      cursor.nextContentSince ??= (serverTime ?? Date.now()) - this.feedLagMs;
      for (const change of data.changes ?? []) yield* this.apply(change, cursor);
      const nextToken = feed.next(cursor.pageToken, data.nextPageToken);
      if (nextToken) {
        cursor.pageToken = nextToken;
        yield { kind: 'checkpoint', cursor: encodeCursor(cursor) };
        continue;
      }
      cursor.pageToken = data.newStartPageToken ?? cursor.pageToken;
      cursor.contentSince = cursor.nextContentSince;
      cursor.nextContentSince = null;
      yield { kind: 'checkpoint', cursor: encodeCursor(cursor) };
      return;
    }
  }

  /**
   * The first sync's starting point: the resource must exist (a shared drive, or a folder that is not trashed), and
   * the feed's position is taken before the listing starts.
   */
  private async start(): Promise<DriveCursor> {
    let feedDriveId: string | null;
    let root: FolderEntry;
    if (this.scope.kind === 'shared_drive') {
      await this.session.drive(this.scope.id);
      feedDriveId = this.scope.id;
      root = { p: null, g: '' };
    } else {
      const folder = await this.session.file(this.scope.id, 'id,name,mimeType,trashed,driveId,permissionIds');
      if (!isFolder(folder)) throw new ConfigurationError(`${this.scope.id} (${folder.name}) is not a folder; a folder resource needs a folder's id.`);
      if (folder.trashed) throw new ResourceGoneError(`The folder ${folder.name} (${this.scope.id}) is in the trash.`);
      feedDriveId = folder.driveId ?? null;
      root = { p: null, g: grantDigest(folder) };
    }
    const readers = await this.session.readers(this.scope.id);
    const { data: pageToken, serverTime } = await this.session.startPageToken(feedDriveId);
    return {
      v: CURSOR_VERSION,
      scope: scopeKey(this.scope),
      feedDriveId,
      pageToken,
      contentSince: (serverTime ?? Date.now()) - this.feedLagMs,
      nextContentSince: null,
      folders: { [this.scope.id]: root },
      readers,
      walk: this.scope.kind === 'shared_drive' ? { kind: 'drive', pageToken: null } : { kind: 'tree', pending: [], batch: [this.scope.id], pageToken: null },
    };
  }

  /** A file as an upsert: its bytes and its permission; a `failure` when Drive will not hand the bytes over. */
  async *read(file: DriveFile): AsyncGenerator<SyncEvent> {
    const content = await this.session.content(file);
    if (content === null) return;
    if (content instanceof ProviderError) {
      yield { kind: 'failure', id: file.id!, error: content };
      return;
    }
    yield { kind: 'upsert', doc: documentOf(file, content, await this.session.permissionOf(file, this.readers)) };
  }

  private inScope(file: DriveFile, cursor: DriveCursor): boolean {
    if (file.trashed) return false;
    if (this.driveScoped) return file.driveId === this.scope.id;
    const parent = parentOf(file);
    return parent !== null && parent in cursor.folders;
  }

  /** What one entry of the changes feed means for the resource. */
  private async *apply(change: drive_v3.Schema$Change, cursor: DriveCursor): AsyncGenerator<SyncEvent> {
    if (change.changeType === 'drive') {
      if (change.driveId !== cursor.feedDriveId) return;
      if (change.removed) throw new ResourceGoneError(`The shared drive ${change.driveId} was deleted, or the connector's account is no longer a member.`);
      // The drive's members or settings changed: every file inherits its members, so all are captured again.
      await this.rereadReaders(cursor);
      yield* this.recapture(this.scope.id, cursor);
      return;
    }
    const id = change.fileId ?? change.file?.id;
    if (!id) return;
    const file = change.removed ? undefined : change.file;
    if (id === this.scope.id && !this.driveScoped) {
      if (!file || file.trashed) throw new ResourceGoneError(`The folder ${id} was deleted, moved to the trash, or is no longer shared with the connector's account.`);
      const digest = grantDigest(file);
      if (cursor.folders[id].g !== digest) {
        cursor.folders[id] = { p: null, g: digest };
        await this.rereadReaders(cursor);
        yield* this.recapture(id, cursor);
      }
      return;
    }
    if (!file) {
      if (id in cursor.folders) this.forget(id, cursor);
      return;
    }
    if (isFolder(file)) {
      const was = cursor.folders[id];
      const inside = this.inScope(file, cursor);
      if (!inside) {
        if (was) this.forget(id, cursor);
        return;
      }
      const now = { p: parentOf(file), g: grantDigest(file) };
      cursor.folders[id] = now;
      if (!was) yield* this.adopt(id, cursor);
      else if (was.p !== now.p || was.g !== now.g) yield* this.recapture(id, cursor);
      return;
    }
    if (!isDocument(file) || !this.inScope(file, cursor)) return;
    if (contentTime(file) > cursor.contentSince) yield* this.read(file);
    else yield { kind: 'permission', id, permission: await this.session.permissionOf(file, this.readers) };
  }

  /** The resource's readers changed: read them again, for the files' permissions captured after. */
  private async rereadReaders(cursor: DriveCursor): Promise<void> {
    cursor.readers = await this.session.readers(this.scope.id);
    this.readers = cursor.readers;
  }

  /** A folder and everything under it left the resource: its files are pruned by the next listing. */
  private forget(folderId: string, cursor: DriveCursor): void {
    for (const id of Object.keys(cursor.folders)) {
      let current: string | null = id;
      for (let depth = 0; current !== null && depth < MAX_DEPTH; depth++) {
        if (current === folderId) {
          delete cursor.folders[id];
          break;
        }
        current = cursor.folders[current]?.p ?? null;
      }
    }
  }

  /** A folder that came into the resource (created, or moved in): its files are read as new documents. */
  private async *adopt(folderId: string, cursor: DriveCursor): AsyncGenerator<SyncEvent> {
    yield* this.walkUnder(folderId, cursor, (file) => this.read(file));
  }

  /** The grants a folder's files inherit changed: each file's permission is captured again, their content is not read. */
  private async *recapture(folderId: string, cursor: DriveCursor): AsyncGenerator<SyncEvent> {
    const { session, readers } = this;
    yield* this.walkUnder(folderId, cursor, async function* (file) {
      yield { kind: 'permission', id: file.id!, permission: await session.permissionOf(file, readers) };
    });
  }

  /** Every document under a folder (the whole drive for a shared drive's id), its subfolders recorded on the way. */
  private async *walkUnder(folderId: string, cursor: DriveCursor, each: (file: DriveFile) => AsyncIterable<SyncEvent>): AsyncGenerator<SyncEvent> {
    const guard = new PageGuard(`the listing of folder ${folderId}`, this.maxPages);
    let position: WalkPosition | null = this.driveScoped && folderId === this.scope.id ? { kind: 'drive', pageToken: null } : { kind: 'tree', pending: [], batch: [folderId], pageToken: null };
    while (position) {
      const { files, next } = await walkPage(this.session, position, cursor.feedDriveId, CRAWL_FIELDS, this.pageSize, guard);
      for (const f of files) {
        if (f.trashed) continue;
        if (isFolder(f)) cursor.folders[f.id!] = { p: parentOf(f), g: grantDigest(f) };
        else if (isDocument(f)) yield* each(f);
      }
      position = next;
    }
  }
}
