import type { drive_v3 } from '@googleapis/drive';
import { DocumentError, ProviderError } from '../../provider-errors';
import type { PermissionCapture } from '../../provider.port';
import { GOOGLE_EXPORTS, type DriveFile } from './google-drive-documents';
import { driveReason, httpStatus, toProviderError } from './google-drive-errors';
import { PageGuard } from './google-drive-pages';
import { filePermission, mapGrants, PERMISSION_FIELDS, type DrivePermission, type GrantMapping } from './google-drive-permissions';

/** Drive's reasons for refusing one file's bytes: that file fails, the rest of the resource syncs. */
const UNREADABLE_FILE_REASONS = new Set(['exportSizeLimitExceeded', 'cannotExportFile', 'cannotDownloadFile', 'fileNotDownloadable', 'cannotDownloadAbusiveFile', 'fileNotExportable']);

export interface SessionLimits {
  /** a document's most bytes */
  maxDocumentBytes: number;
  /** how long one download or export may take */
  downloadTimeoutMs: number;
  /** pages one listing of grants may take */
  maxPages: number;
}

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
    private readonly limits: SessionLimits,
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
    const guard = new PageGuard(`the permissions of ${fileId}`, this.limits.maxPages);
    let pageToken: string | undefined;
    do {
      const data = await this.call(`reading the permissions of ${fileId}`, async () => (await this.api.permissions.list({ fileId, supportsAllDrives: true, pageSize: 100, pageToken, fields: `nextPageToken,permissions(${PERMISSION_FIELDS})` }, this.options)).data);
      out.push(...(data.permissions ?? []));
      pageToken = guard.next(pageToken, data.nextPageToken);
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
   * A document's bytes: exported for a Google file, downloaded otherwise, read as a stream and counted as they come, so
   * nothing past the limit is held. A file Drive will not hand over, one larger than the limit (by its `size`, its
   * Content-Length or its bytes), or one whose bytes do not all arrive within `downloadTimeoutMs`, is a DocumentError
   * (that file fails, the sync goes on); a file that vanished meanwhile is null (the next listing leaves it out).
   */
  async content(file: DriveFile): Promise<Uint8Array | DocumentError | null> {
    const exported = GOOGLE_EXPORTS[file.mimeType ?? ''];
    const size = Number(file.size ?? 0);
    const what = `${file.name} (${file.id})`;
    const tooLarge = (bytes: number, how: string) => new DocumentError(`${what} ${how} ${bytes} bytes, more than the ${this.limits.maxDocumentBytes} a document may have.`);
    if (!exported && size > this.limits.maxDocumentBytes) return tooLarge(size, 'is');
    const deadline = AbortSignal.timeout(this.limits.downloadTimeoutMs);
    // Aborted once the limit is passed, so the connection is dropped rather than drained.
    const enough = new AbortController();
    const signal = AbortSignal.any([deadline, enough.signal, ...(this.signal ? [this.signal] : [])]);
    // 4xx answers come back as answers, their error body read here (a stream's is not parsed by the client); 5xx
    // still go through the client's retries.
    const options = { signal, responseType: 'stream' as const, validateStatus: (status: number) => status < 400 || status >= 500 };
    try {
      const res = exported
        ? await this.api.files.export({ fileId: file.id!, mimeType: exported }, options)
        : await this.api.files.get({ fileId: file.id!, alt: 'media', supportsAllDrives: true }, options);
      const body = res.data as unknown as AsyncIterable<Uint8Array>;
      if (res.status >= 400) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status, response: { status: res.status, headers: res.headers, data: await errorBody(body) } });
      const length = Number(header(res.headers, 'content-length') ?? Number.NaN);
      if (length > this.limits.maxDocumentBytes) {
        enough.abort(tooLarge(length, 'announces'));
        return enough.signal.reason as DocumentError;
      }
      const chunks: Uint8Array[] = [];
      let received = 0;
      for await (const chunk of body) {
        received += chunk.byteLength;
        if (received > this.limits.maxDocumentBytes) {
          // Leaving the loop lets go of the stream; the abort drops the connection instead of draining it.
          enough.abort(tooLarge(received, 'gives at least'));
          break;
        }
        chunks.push(chunk);
      }
      if (enough.signal.aborted) return enough.signal.reason as DocumentError;
      return new Uint8Array(Buffer.concat(chunks));
    } catch (err) {
      if (this.signal?.aborted) throw this.signal.reason;
      if (enough.signal.aborted) return enough.signal.reason as DocumentError;
      if (deadline.aborted) return new DocumentError(`${what} did not arrive within ${this.limits.downloadTimeoutMs} ms; it is tried again at the next sync.`);
      const status = httpStatus(err);
      const reason = driveReason(err);
      if (status === 404) return null;
      if ((status === 403 || status === 400) && reason !== undefined && UNREADABLE_FILE_REASONS.has(reason)) {
        return new DocumentError(`Google Drive will not ${exported ? 'export' : 'download'} ${what}: ${reason}.`, { cause: err });
      }
      throw toProviderError(err, `${exported ? 'exporting' : 'downloading'} ${what}`);
    }
  }
}

/** The most of an error answer read: Drive's error JSON is a few hundred bytes. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** An error answer's body, as JSON when it is JSON, read up to MAX_ERROR_BODY_BYTES. */
async function errorBody(body: AsyncIterable<Uint8Array>): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    received += chunk.byteLength;
    if (received >= MAX_ERROR_BODY_BYTES) break;
  }
  const text = Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function header(headers: Headers | Record<string, string | string[] | undefined> | undefined, name: string): string | undefined {
  const raw = headers instanceof Headers ? headers.get(name) : headers?.[name];
  return (Array.isArray(raw) ? raw[0] : raw) ?? undefined;
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
