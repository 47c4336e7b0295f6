import type { drive_v3 } from '@googleapis/drive';
import { DocumentError, ProviderError } from '../../provider-errors';
import type { PermissionCapture } from '../../provider.port';
import { GOOGLE_EXPORTS, type DriveFile } from './google-drive-documents';
import { driveReason, httpStatus, toProviderError } from './google-drive-errors';
import { filePermission, mapGrants, PERMISSION_FIELDS, type DrivePermission, type GrantMapping } from './google-drive-permissions';

/** Drive's reasons for refusing one file's bytes: that file fails, the rest of the resource syncs. */
const UNREADABLE_FILE_REASONS = new Set(['exportSizeLimitExceeded', 'cannotExportFile', 'cannotDownloadFile', 'fileNotDownloadable', 'cannotDownloadAbusiveFile', 'fileNotExportable']);

/** One page of a files.list or changes.list, with the server's time of the answer (its Date header). */
export interface Page<T> {
  data: T;
  serverTime: number | null;
}

/**
 * The Drive calls of one provider call, on one client: every failure mapped to a ProviderError saying what was being
 * done, and the caller's abort signal passed to each request (an aborted call rethrows the signal's reason).
 */
export class DriveSession {
  constructor(
    readonly api: drive_v3.Drive,
    private readonly signal: AbortSignal | undefined,
    private readonly maxDocumentBytes: number,
  ) {}

  private get options() {
    return this.signal ? { signal: this.signal } : {};
  }

  /** Runs one call; a failure becomes a ProviderError about `what`. */
  async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    this.signal?.throwIfAborted();
    try {
      return await run();
    } catch (err) {
      if (this.signal?.aborted) throw this.signal.reason;
      throw toProviderError(err, what);
    }
  }

  async about(): Promise<drive_v3.Schema$About> {
    return this.call('checking the credentials', async () => (await this.api.about.get({ fields: 'user(displayName,emailAddress)' }, this.options)).data);
  }

  async drive(driveId: string): Promise<drive_v3.Schema$Drive> {
    return this.call(`reading shared drive ${driveId}`, async () => (await this.api.drives.get({ driveId, fields: 'id,name' }, this.options)).data);
  }

  async drives(pageToken: string | undefined): Promise<drive_v3.Schema$DriveList> {
    return this.call('listing shared drives', async () => (await this.api.drives.list({ pageSize: 100, pageToken, fields: 'nextPageToken,drives(id,name)' }, this.options)).data);
  }

  async file(fileId: string, fields: string): Promise<DriveFile> {
    return this.call(`reading file ${fileId}`, async () => (await this.api.files.get({ fileId, fields, supportsAllDrives: true }, this.options)).data);
  }

  /** A file's metadata, or null when Drive no longer shows it (deleted, or no longer shared with the account). */
  async fileIfVisible(fileId: string, fields: string): Promise<DriveFile | null> {
    try {
      return await this.file(fileId, fields);
    } catch (err) {
      if (httpStatus((err as ProviderError).cause) === 404) return null;
      throw err;
    }
  }

  async listFiles(what: string, params: drive_v3.Params$Resource$Files$List): Promise<Page<drive_v3.Schema$FileList>> {
    return this.call(what, async () => {
      const res = await this.api.files.list({ supportsAllDrives: true, includeItemsFromAllDrives: true, ...params }, this.options);
      return { data: res.data, serverTime: serverTime(res.headers) };
    });
  }

  async startPageToken(driveId: string | null): Promise<Page<string>> {
    return this.call('reading the changes feed position', async () => {
      const res = await this.api.changes.getStartPageToken({ supportsAllDrives: true, ...(driveId ? { driveId } : {}) }, this.options);
      if (!res.data.startPageToken) throw new Error('Drive answered no startPageToken');
      return { data: res.data.startPageToken, serverTime: serverTime(res.headers) };
    });
  }

  async changes(params: drive_v3.Params$Resource$Changes$List): Promise<Page<drive_v3.Schema$ChangeList>> {
    return this.call('reading the changes feed', async () => {
      const res = await this.api.changes.list({ supportsAllDrives: true, includeItemsFromAllDrives: true, includeRemoved: true, ...params }, this.options);
      return { data: res.data, serverTime: serverTime(res.headers) };
    });
  }

  /** Every grant on a file, folder or shared drive (permissions.list, by pages of 100). */
  async grants(fileId: string): Promise<DrivePermission[]> {
    const out: DrivePermission[] = [];
    let pageToken: string | undefined;
    do {
      const data = await this.call(`reading the permissions of ${fileId}`, async () => (await this.api.permissions.list({ fileId, supportsAllDrives: true, pageSize: 100, pageToken, fields: `nextPageToken,permissions(${PERMISSION_FIELDS})` }, this.options)).data);
      out.push(...(data.permissions ?? []));
      pageToken = data.nextPageToken ?? undefined;
    } while (pageToken);
    return out;
  }

  /** The readers of a folder or shared drive (a shared drive's id lists its members), as principals. */
  async readers(id: string): Promise<GrantMapping> {
    return mapGrants(await this.grants(id), id);
  }

  /**
   * A file's per-document permission: its readers in force (see filePermission). Drive returns
   * `permissions` with a file only outside shared drives and only to an account that may share it; otherwise they are
   * listed. When even the listing is refused (the account may read the file but not its sharing), the capture failed:
   * the file is closed rather than shown more widely.
   */
  async permissionOf(file: DriveFile, resource: GrantMapping): Promise<PermissionCapture> {
    if (!file.driveId && file.permissions) return filePermission(file.permissions, file.id!, resource);
    try {
      return filePermission(await this.grants(file.id!), file.id!, resource);
    } catch (err) {
      const status = httpStatus((err as ProviderError).cause);
      if (status === 403 || status === 404) return { status: 'failed' };
      throw err;
    }
  }

  /**
   * A document's bytes: exported for a Google file, downloaded otherwise. A file Drive will not hand over, or one
   * larger than the limit, is a DocumentError (that file fails, the sync goes on); a file that vanished meanwhile is
   * null (the next listing leaves it out).
   */
  async content(file: DriveFile): Promise<Uint8Array | DocumentError | null> {
    const exported = GOOGLE_EXPORTS[file.mimeType ?? ''];
    const size = Number(file.size ?? 0);
    if (!exported && size > this.maxDocumentBytes) return new DocumentError(`${file.name} (${file.id}) is ${size} bytes, more than the ${this.maxDocumentBytes} a document may have.`);
    try {
      const res = exported
        ? await this.api.files.export({ fileId: file.id!, mimeType: exported }, { ...this.options, responseType: 'arraybuffer' })
        : await this.api.files.get({ fileId: file.id!, alt: 'media', supportsAllDrives: true }, { ...this.options, responseType: 'arraybuffer' });
      const bytes = new Uint8Array(res.data as unknown as ArrayBuffer);
      if (bytes.byteLength > this.maxDocumentBytes) return new DocumentError(`${file.name} (${file.id}) gives ${bytes.byteLength} bytes, more than the ${this.maxDocumentBytes} a document may have.`);
      return bytes;
    } catch (err) {
      if (this.signal?.aborted) throw this.signal.reason;
      const status = httpStatus(err);
      const reason = driveReason(err);
      if (status === 404) return null;
      if ((status === 403 || status === 400) && reason !== undefined && UNREADABLE_FILE_REASONS.has(reason)) {
        return new DocumentError(`Google Drive will not ${exported ? 'export' : 'download'} ${file.name} (${file.id}): ${reason}.`, { cause: err });
      }
      throw toProviderError(err, `${exported ? 'exporting' : 'downloading'} ${file.name} (${file.id})`);
    }
  }
}

/**
 * The server's clock at the answer (the HTTP Date header), or null when it is missing. The client declares its
 * headers as an HTTP/2 header record and hands a fetch `Headers` over HTTP/1.1: both are read.
 */
function serverTime(headers: Headers | Record<string, string | string[] | undefined> | undefined): number | null {
  const raw = headers instanceof Headers ? headers.get('date') : headers?.date;
  const value = Array.isArray(raw) ? raw[0] : raw;
  const time = value ? Date.parse(value) : Number.NaN;
  return Number.isNaN(time) ? null : time;
}
