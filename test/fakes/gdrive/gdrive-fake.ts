import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { drive_v3 } from '@googleapis/drive';
import { createFakeApp, listenOnLoopback, type RunningFake } from '../loopback-server';
import { ScenarioSwitches, type Interruption } from '../scenario-switches';

export type DriveFile = drive_v3.Schema$File;
export type DrivePermission = drive_v3.Schema$Permission;
type DriveChange = drive_v3.Schema$Change;

/** A file of the fake with what Drive keeps beside its metadata: its bytes and its grants. */
interface FileState {
  file: DriveFile;
  content: string;
  permissions: DrivePermission[];
}

/** One entry of the changes feed: Drive keeps one per file, at the position of its latest change. */
interface ChangeEntry {
  position: number;
  fileId: string;
  time: string;
}

/**
 * A Drive field mask (`nextPageToken, files(id, name, permissions(type, role))`) as a tree: each key maps to its own
 * sub-mask, or to undefined when the whole value is wanted.
 */
type FieldMask = Map<string, FieldMask | undefined>;

function parseFieldMask(text: string): FieldMask {
  let index = 0;
  const parseLevel = (): FieldMask => {
    const mask: FieldMask = new Map();
    let name = '';
    const flush = (sub?: FieldMask) => {
      const path = name.trim();
      name = '';
      if (path === '') return;
      // `a/b` is shorthand for `a(b)`.
      const [head, ...rest] = path.split('/');
      mask.set(head, rest.length > 0 ? new Map([[rest.join('/'), sub]]) : sub);
    };
    while (index < text.length) {
      const char = text[index++];
      if (char === '(') flush(parseLevel());
      else if (char === ')') break;
      else if (char === ',') flush();
      else name += char;
    }
    flush();
    return mask;
  };
  return parseLevel();
}

/** Keeps only the fields the mask asks for, recursing into objects and arrays; `*` keeps everything. */
function applyFieldMask(value: unknown, mask: FieldMask | undefined): unknown {
  if (mask === undefined || mask.has('*') || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => applyFieldMask(v, mask));
  const kept: Record<string, unknown> = {};
  for (const [key, sub] of mask) {
    if (key in (value as Record<string, unknown>)) kept[key] = applyFieldMask((value as Record<string, unknown>)[key], sub);
  }
  return kept;
}

/** Page tokens are opaque to clients; these carry the offset into one stable ordering of the listing. */
const encodeToken = (offset: number): string => Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
const decodeToken = (token: string | undefined): number => (token === undefined ? 0 : (JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { o: number }).o);

/** The query terms a drive connector sends, joined by `and`: parents, trashed, mimeType and time comparisons. */
function matchesQuery(file: DriveFile, query: string | undefined): boolean {
  if (query === undefined || query.trim() === '') return true;
  return query.split(/\s+and\s+/i).every((term) => {
    const inParents = /^'([^']+)'\s+in\s+parents$/i.exec(term.trim());
    if (inParents) return (file.parents ?? []).includes(inParents[1]);
    const comparison = /^(\w+)\s*(=|!=|>|>=|<|<=)\s*'?([^']*)'?$/.exec(term.trim());
    if (!comparison) throw Object.assign(new Error(`Invalid Value: ${term}`), { statusCode: 400 });
    const [, field, op, literal] = comparison;
    const actual = String((file as Record<string, unknown>)[field] ?? '');
    const [a, b] = field.endsWith('Time') ? [Date.parse(actual), Date.parse(literal)] : [actual, literal];
    switch (op) {
      case '=': return a === b;
      case '!=': return a !== b;
      case '>': return a > b;
      case '>=': return a >= b;
      case '<': return a < b;
      default: return a <= b;
    }
  });
}

/**
 * A fake of the Google Drive v3 API (the endpoints a drive connector calls), holding shared drives, files with their
 * bytes and grants, and the changes feed. Lists page by opaque `pageToken`/`nextPageToken`; responses carry only the
 * fields asked for with `fields` (or Drive's defaults); every change to a file, its grants included, moves it to the
 * head of the changes feed, as Drive does. Failures carry Drive's `{ error: { code, message, errors, status } }` body.
 */
export class DriveFake {
  readonly switches: ScenarioSwitches;
  readonly drives: drive_v3.Schema$Drive[] = [];
  private readonly files = new Map<string, FileState>();
  private readonly changes: ChangeEntry[] = [];
  private position = 0;
  private clock = Date.parse('2024-03-01T09:00:00Z');
  private running: RunningFake | undefined;

  constructor(readonly token = 'ya29.fake-access-token') {
    this.switches = new ScenarioSwitches(new Set([token]));
  }

  addDrive(id: string, name: string): void {
    this.drives.push({ kind: 'drive#drive', id, name, createdTime: this.tick() });
  }

  /** Adds a file (or a folder, by its mime type) and records the change; `modifiedTime` may be given, back-dated. */
  addFile(file: DriveFile & { id: string }, content = '', permissions: DrivePermission[] = []): void {
    const modifiedTime = file.modifiedTime ?? this.tick();
    this.files.set(file.id, {
      file: { kind: 'drive#file', mimeType: 'text/plain', trashed: false, version: '1', createdTime: modifiedTime, ...file, modifiedTime, md5Checksum: this.md5(content), size: String(Buffer.byteLength(content)) },
      content,
      permissions: permissions.map((p) => ({ kind: 'drive#permission', ...p })),
    });
    this.recordChange(file.id);
  }

  /** New bytes: a new version and modifiedTime (or the given one, which an upload may set in the past). */
  editFile(fileId: string, content: string, modifiedTime?: string): void {
    const state = this.state(fileId);
    state.content = content;
    Object.assign(state.file, { modifiedTime: modifiedTime ?? this.tick(), version: String(Number(state.file.version) + 1), md5Checksum: this.md5(content), size: String(Buffer.byteLength(content)) });
    this.recordChange(fileId);
  }

  /** Trashing keeps the file (trashed: true); the feed reports it as a change, not a removal. */
  trashFile(fileId: string): void {
    this.state(fileId).file.trashed = true;
    this.recordChange(fileId);
  }

  /** A permanent deletion: the feed reports `removed: true` with no file. */
  deleteFile(fileId: string): void {
    this.files.delete(fileId);
    this.recordChange(fileId);
  }

  /** Grants change without touching modifiedTime or version: only the changes feed shows them. */
  share(fileId: string, permission: DrivePermission): void {
    this.state(fileId).permissions.push({ kind: 'drive#permission', ...permission });
    this.recordChange(fileId);
  }

  unshare(fileId: string, permissionId: string): void {
    const state = this.state(fileId);
    state.permissions = state.permissions.filter((p) => p.id !== permissionId);
    this.recordChange(fileId);
  }

  async start(): Promise<RunningFake> {
    const app = createFakeApp();
    app.addHook('onRequest', async (req, reply) => {
      const interruption = this.switches.intercept(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]);
      if (interruption !== undefined) return this.interrupt(reply, interruption);
    });
    app.addHook('onSend', async (req) => {
      this.switches.answered(req.method, req.url);
    });
    app.setErrorHandler((error: { statusCode?: number; message: string }, _req, reply) => {
      const code = error.statusCode ?? 500;
      const reason = code === 404 ? 'notFound' : code === 400 ? 'invalid' : 'backendError';
      return reply.code(code).send({ error: { code, message: error.message, errors: [{ message: error.message, domain: 'global', reason }] } });
    });

    app.get('/drive/v3/about', (req) => this.masked(req, { kind: 'drive#about', user: { kind: 'drive#user', displayName: 'CRS connector', emailAddress: 'crs-connector@example.test' } } satisfies drive_v3.Schema$About));
    app.get('/drive/v3/drives', (req) => {
      const query = req.query as Record<string, string>;
      const { items, nextPageToken } = this.page(this.drives, query, 10, 100);
      return this.masked(req, { kind: 'drive#driveList', drives: items, nextPageToken } satisfies drive_v3.Schema$DriveList, 'nextPageToken,kind,drives(id,name,kind)');
    });
    app.get('/drive/v3/files', (req) => this.listFiles(req));
    app.get('/drive/v3/files/:fileId', (req, reply) => this.getFile(req, reply));
    app.get('/drive/v3/files/:fileId/permissions', (req) => {
      const query = req.query as Record<string, string>;
      const { items, nextPageToken } = this.page(this.state((req.params as { fileId: string }).fileId).permissions, query, 100, 100);
      return this.masked(req, { kind: 'drive#permissionList', permissions: items, nextPageToken } satisfies drive_v3.Schema$PermissionList, 'nextPageToken,kind,permissions(id,type,kind,role)');
    });
    app.get('/drive/v3/changes/startPageToken', (req) => this.masked(req, { kind: 'drive#startPageToken', startPageToken: String(this.position + 1) } satisfies drive_v3.Schema$StartPageToken));
    app.get('/drive/v3/changes', (req) => this.listChanges(req));
    this.running = await listenOnLoopback(app);
    return this.running;
  }

  async stop(): Promise<void> {
    await this.running?.close();
    this.running = undefined;
  }

  private interrupt(reply: FastifyReply, interruption: Interruption) {
    switch (interruption.kind) {
      case 'rate-limited':
        return reply.code(429).header('retry-after', String(interruption.retryAfterSeconds)).send({
          error: { code: 429, message: 'Rate limit exceeded', errors: [{ message: 'Rate limit exceeded', domain: 'usageLimits', reason: 'rateLimitExceeded' }], status: 'RESOURCE_EXHAUSTED' },
        });
      case 'server-error':
        return reply.code(interruption.status).send({
          error: { code: interruption.status, message: 'Backend Error', errors: [{ message: 'Backend Error', domain: 'global', reason: 'backendError' }] },
        });
      case 'unauthorized':
        return reply.code(401).header('www-authenticate', 'Bearer realm="https://accounts.google.com/", error="invalid_token"').send({
          error: {
            code: 401,
            message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
            errors: [{ message: 'Invalid Credentials', domain: 'global', reason: 'authError', location: 'Authorization', locationType: 'header' }],
            status: 'UNAUTHENTICATED',
          },
        });
      default: {
        const unreachable: never = interruption;
        throw new Error(`unknown interruption ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** Files matching `q`, in `driveId` when given, ordered by `orderBy` (name or modifiedTime) or else by id. */
  private listFiles(req: FastifyRequest) {
    const query = req.query as Record<string, string>;
    const orderBy = (query.orderBy ?? '').split(',')[0]?.trim() ?? '';
    const [orderField, descending] = [orderBy.split(' ')[0], orderBy.endsWith(' desc')];
    const files = [...this.files.values()]
      .map((s) => this.withPermissions(s))
      .filter((f) => query.driveId === undefined || f.driveId === query.driveId)
      .filter((f) => matchesQuery(f, query.q))
      .sort((a, b) => {
        const key = orderField === 'name' || orderField === 'modifiedTime' ? orderField : 'id';
        const order = String(a[key]).localeCompare(String(b[key])) || a.id!.localeCompare(b.id!);
        return descending ? -order : order;
      });
    const { items, nextPageToken } = this.page(files, query, 100, 1000);
    const body: drive_v3.Schema$FileList = { kind: 'drive#fileList', incompleteSearch: false, files: items, nextPageToken };
    return this.masked(req, body, 'nextPageToken,kind,incompleteSearch,files(id,name,mimeType,kind)');
  }

  /** Metadata by default; the bytes with `alt=media`, as a download would return them. */
  private getFile(req: FastifyRequest, reply: FastifyReply) {
    const state = this.state((req.params as { fileId: string }).fileId);
    if ((req.query as Record<string, string>).alt === 'media') return reply.type(state.file.mimeType ?? 'application/octet-stream').send(state.content);
    return this.masked(req, this.withPermissions(state), 'id,name,mimeType,kind');
  }

  /**
   * Changes after the page token, one per file at its latest change, each with the file as it is now (or
   * `removed: true` once deleted). The last page carries `newStartPageToken`, the token of the next sync.
   */
  private listChanges(req: FastifyRequest) {
    const query = req.query as Record<string, string>;
    if (query.pageToken === undefined) throw Object.assign(new Error('Required parameter: pageToken'), { statusCode: 400 });
    const after = Number(query.pageToken);
    const pending = this.changes.filter((c) => c.position >= after).sort((a, b) => a.position - b.position);
    const size = this.switches.pageSize(Number(query.pageSize), 100, 1000);
    const items = pending.slice(0, size);
    const next = pending[size];
    const changes: DriveChange[] = items.map((c) => {
      const state = this.files.get(c.fileId);
      return state === undefined
        ? { kind: 'drive#change', changeType: 'file', fileId: c.fileId, removed: true, time: c.time }
        : { kind: 'drive#change', changeType: 'file', fileId: c.fileId, removed: false, time: c.time, file: this.withPermissions(state) };
    });
    const body: drive_v3.Schema$ChangeList = {
      kind: 'drive#changeList',
      changes,
      ...(next === undefined ? { newStartPageToken: String(this.position + 1) } : { nextPageToken: String(next.position) }),
    };
    return this.masked(req, body, 'kind,nextPageToken,newStartPageToken,changes(kind,changeType,time,removed,fileId,file(id,name,mimeType,kind))');
  }

  private page<T>(items: T[], query: Record<string, string>, endpointDefault: number, endpointMax: number) {
    const offset = decodeToken(query.pageToken);
    const size = this.switches.pageSize(Number(query.pageSize), endpointDefault, endpointMax);
    return { items: items.slice(offset, offset + size), nextPageToken: offset + size < items.length ? encodeToken(offset + size) : undefined };
  }

  /** The response cut to `fields`, or to Drive's default fields for this endpoint when none are asked for. */
  private masked<T>(req: FastifyRequest, body: T, defaults = '*'): T {
    const fields = (req.query as Record<string, string>).fields ?? defaults;
    return applyFieldMask(body, parseFieldMask(fields)) as T;
  }

  private withPermissions(state: FileState): DriveFile {
    return { ...state.file, permissions: state.permissions.map((p) => ({ ...p })), permissionIds: state.permissions.map((p) => p.id!) };
  }

  private recordChange(fileId: string): void {
    const existing = this.changes.findIndex((c) => c.fileId === fileId);
    if (existing >= 0) this.changes.splice(existing, 1);
    this.changes.push({ position: ++this.position, fileId, time: this.tick() });
  }

  /** A clock that moves a minute per event, so times are distinct and ordered without depending on the wall clock. */
  private tick(): string {
    this.clock += 60_000;
    return new Date(this.clock).toISOString();
  }

  private md5(content: string): string {
    return createHash('md5').update(content).digest('hex');
  }

  private state(fileId: string): FileState {
    const state = this.files.get(fileId);
    if (state === undefined) throw Object.assign(new Error(`File not found: ${fileId}.`), { statusCode: 404 });
    return state;
  }
}
