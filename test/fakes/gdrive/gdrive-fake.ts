import { createHash, createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { drive_v3 } from '@googleapis/drive';
import { createFakeApp, listenOnLoopback, type RunningFake } from '../loopback-server';
import { ScenarioSwitches, type Interruption } from '../scenario-switches';

export type DriveFile = drive_v3.Schema$File;
export type DrivePermission = drive_v3.Schema$Permission;
type DriveChange = drive_v3.Schema$Change;

const FOLDER = 'application/vnd.google-apps.folder';

/** What a Docs editors file exports to (files.export), by its type; any other file is not exportable. */
const EXPORTS: Record<string, string[]> = {
  'application/vnd.google-apps.document': ['text/plain', 'text/markdown', 'text/html', 'application/pdf'],
  'application/vnd.google-apps.spreadsheet': ['text/csv', 'text/tab-separated-values', 'application/pdf'],
  'application/vnd.google-apps.presentation': ['text/plain', 'application/pdf'],
};
/** files.export answers at most 10 MB. */
const EXPORT_LIMIT_BYTES = 10 * 1024 * 1024;

/** A file of the fake with what Drive keeps beside its metadata: its bytes and its own grants. */
/** The listings a test can make endless (`repeatPageTokens`). */
export type PagedEndpoint = 'files' | 'changes' | 'permissions' | 'drives';

interface FileState {
  file: DriveFile;
  content: string;
  permissions: DrivePermission[];
}

/** One entry of the changes feed: Drive keeps one per file (or shared drive), at the position of its latest change. */
interface ChangeEntry {
  position: number;
  kind: 'file' | 'drive';
  id: string;
  /** the shared drive the item was in at the change; null for My Drive */
  driveId: string | null;
  time: string;
}

/** A service account the token endpoint knows: its public key, whether the key was deleted, who it may act as. */
interface ServiceAccount {
  publicKey: KeyObject;
  revoked: boolean;
  /** the users it may act as (domain-wide delegation) */
  subjects: Set<string>;
  issued: string[];
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

const invalidQuery = (term: string) => Object.assign(new Error(`Invalid Value: ${term}`), { statusCode: 400 });

/** Splits `text` on ` <word> ` outside parentheses and quotes. */
function splitTop(text: string, word: 'and' | 'or'): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  const separator = new RegExp(`^\\s+${word}\\s+`, 'i');
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "'" && text[i - 1] !== '\\') quoted = !quoted;
    else if (!quoted && char === '(') depth++;
    else if (!quoted && char === ')') depth--;
    else if (!quoted && depth === 0 && /\s/.test(char)) {
      const match = separator.exec(text.slice(i));
      if (match) {
        parts.push(text.slice(start, i));
        i += match[0].length - 1;
        start = i + 1;
      }
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

/**
 * The query language terms a drive connector sends: `and` / `or` with parentheses, `'<id>' in parents` (`'root'` is
 * My Drive's root), `sharedWithMe`, and comparisons on a field (`trashed = false`, `mimeType != '...'`, times).
 */
function matchesQuery(file: DriveFile, query: string | undefined, myDriveRoot: string): boolean {
  if (query === undefined || query.trim() === '') return true;
  const evaluate = (expression: string): boolean => {
    const text = expression.trim();
    const ors = splitTop(text, 'or');
    if (ors.length > 1) return ors.some(evaluate);
    const ands = splitTop(text, 'and');
    if (ands.length > 1) return ands.every(evaluate);
    if (text.startsWith('(') && text.endsWith(')')) return evaluate(text.slice(1, -1));
    const inParents = /^'([^']+)'\s+in\s+parents$/i.exec(text);
    if (inParents) return (file.parents ?? []).includes(inParents[1] === 'root' ? myDriveRoot : inParents[1]);
    if (/^sharedWithMe$/i.test(text)) return file.sharedWithMeTime !== undefined;
    const comparison = /^(\w+)\s*(=|!=|>|>=|<|<=)\s*'?([^']*)'?$/.exec(text);
    if (!comparison) throw invalidQuery(text);
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
  };
  return evaluate(query);
}

/** A throttled answer scheduled for one request: the `nth` next request to `path` (exactly, or matching a RegExp). */
interface Throttle {
  path: string | RegExp;
  remaining: number;
  status: 403 | 429;
  reason: string;
  retryAfter: string | undefined;
}

/**
 * A fake of the Google Drive v3 API (the endpoints a drive connector calls), holding shared drives with their members,
 * files with their bytes and grants, and the changes feed; and of Google's OAuth 2.0 token endpoint for service
 * accounts (`POST /token`). Lists page by opaque `pageToken`/`nextPageToken`; responses carry only the fields asked
 * for with `fields` (or Drive's defaults); every change to a file, its grants included, moves it to the head of the
 * changes feed, as Drive does. As Drive documents: grants propagate down (a file's grants include its folders' and,
 * in a shared drive, the drive members'), `permissions` is not returned with files of a shared drive (permissions.list
 * lists them), Docs editors files have no bytes or checksum of their own (files.export gives them), and changes to a
 * shared drive (its members) are one `changeType: 'drive'` entry, not an entry per file. The HTTP Date of every answer
 * is the fake's clock, which moves a minute per change (and by `advanceClock`). Failures carry Drive's
 * `{ error: { code, message, errors, status } }` body.
 */
export class DriveFake {
  readonly switches: ScenarioSwitches;
  readonly drives: drive_v3.Schema$Drive[] = [];
  /** My Drive's root folder id (what `'root' in parents` means) */
  readonly myDriveRoot = '0AMyDriveRoot';
  private readonly validTokens: Set<string>;
  private readonly members = new Map<string, DrivePermission[]>();
  private readonly files = new Map<string, FileState>();
  private readonly changes: ChangeEntry[] = [];
  private readonly accounts = new Map<string, ServiceAccount>();
  private readonly throttles: Throttle[] = [];
  private keyPair: { privateKey: string; publicKey: KeyObject } | undefined;
  private issued = 0;
  private position = 0;
  private clock = Date.parse('2024-03-01T09:00:00Z');
  private running: RunningFake | undefined;
  /** Listings whose pages never end: each gives the token it was asked with (or, first, the second page's) as the next. */
  private readonly endless = new Set<PagedEndpoint>();
  /** Files whose download or export sends its bytes and then never ends. */
  private readonly stalled = new Set<string>();
  /** Drops every connection, those of answers left open included, so `stop` does not wait on them. */
  private closeConnections: (() => void) | undefined;

  constructor(readonly token = 'ya29.fake-access-token') {
    this.validTokens = new Set([token]);
    this.switches = new ScenarioSwitches(this.validTokens);
  }

  /** The fake's clock: modification times, change times and every answer's Date header. */
  get now(): string {
    return new Date(this.clock).toISOString();
  }

  /** Time passes at the source (between syncs, say) without any change. */
  advanceClock(ms: number): void {
    this.clock += ms;
  }

  addDrive(id: string, name: string, members: DrivePermission[] = []): void {
    this.drives.push({ kind: 'drive#drive', id, name, createdTime: this.tick() });
    this.members.set(id, members.map((p) => ({ kind: 'drive#permission', ...p })));
  }

  /** A member joins a shared drive: one drive change in the feed; every file of the drive inherits the grant. */
  addDriveMember(driveId: string, permission: DrivePermission): void {
    this.drive(driveId);
    this.members.get(driveId)!.push({ kind: 'drive#permission', ...permission });
    this.recordChange('drive', driveId, driveId);
  }

  removeDriveMember(driveId: string, permissionId: string): void {
    this.drive(driveId);
    this.members.set(driveId, this.members.get(driveId)!.filter((p) => p.id !== permissionId));
    this.recordChange('drive', driveId, driveId);
  }

  hasFile(fileId: string): boolean {
    return this.files.has(fileId);
  }

  /** Adds a file (or a folder, by its mime type) and records the change; `modifiedTime` may be given, back-dated. */
  addFile(file: DriveFile & { id: string }, content = '', permissions: DrivePermission[] = []): void {
    const modifiedTime = file.modifiedTime ?? this.tick();
    const mimeType = file.mimeType ?? 'text/plain';
    this.files.set(file.id, {
      file: { kind: 'drive#file', mimeType, trashed: false, version: '1', createdTime: modifiedTime, ...file, modifiedTime, ...this.bytesFields(mimeType, content) },
      content,
      permissions: permissions.map((p) => ({ kind: 'drive#permission', ...p })),
    });
    this.recordChange('file', file.id, file.driveId ?? null);
  }

  /** New bytes: a new version and modifiedTime (or the given one, which an upload may set in the past). */
  editFile(fileId: string, content: string, modifiedTime?: string): void {
    const state = this.state(fileId);
    state.content = content;
    Object.assign(state.file, { modifiedTime: modifiedTime ?? this.tick(), version: String(Number(state.file.version) + 1), ...this.bytesFields(state.file.mimeType!, content) });
    this.recordChange('file', fileId, state.file.driveId ?? null);
  }

  /** A new name: Drive counts a rename as a modification. */
  renameFile(fileId: string, name: string): void {
    const state = this.state(fileId);
    Object.assign(state.file, { name, modifiedTime: this.tick(), version: String(Number(state.file.version) + 1) });
    this.recordChange('file', fileId, state.file.driveId ?? null);
  }

  /** Moves a file or folder to another folder (of any drive); its modification time stays. */
  moveFile(fileId: string, parentId: string, driveId: string | null = null): void {
    const state = this.state(fileId);
    state.file.parents = [parentId];
    if (driveId === null) delete state.file.driveId;
    else state.file.driveId = driveId;
    this.recordChange('file', fileId, driveId);
  }

  /** Trashing keeps the file (trashed: true); the feed reports it as a change, not a removal. A folder's contents go with it. */
  trashFile(fileId: string): void {
    const state = this.state(fileId);
    state.file.trashed = true;
    this.recordChange('file', fileId, state.file.driveId ?? null);
    if (state.file.mimeType === FOLDER) {
      for (const child of [...this.files.values()].filter((s) => s.file.parents?.includes(fileId) && !s.file.trashed)) this.trashFile(child.file.id!);
    }
  }

  /** A permanent deletion: the feed reports `removed: true` with no file. */
  deleteFile(fileId: string): void {
    const driveId = this.state(fileId).file.driveId ?? null;
    this.files.delete(fileId);
    this.recordChange('file', fileId, driveId);
  }

  /** Grants change without touching modifiedTime or version: only the changes feed shows them. */
  share(fileId: string, permission: DrivePermission): void {
    this.state(fileId).permissions.push({ kind: 'drive#permission', ...permission });
    this.recordChange('file', fileId, this.state(fileId).file.driveId ?? null);
  }

  unshare(fileId: string, permissionId: string): void {
    const state = this.state(fileId);
    state.permissions = state.permissions.filter((p) => p.id !== permissionId);
    this.recordChange('file', fileId, state.file.driveId ?? null);
  }

  /** Replaces a file's own grants (inherited ones stay), as one permission change. */
  setPermissions(fileId: string, permissions: DrivePermission[]): void {
    const state = this.state(fileId);
    state.permissions = permissions.map((p) => ({ kind: 'drive#permission', ...p }));
    this.recordChange('file', fileId, state.file.driveId ?? null);
  }

  /** Every grant in force on a file: its own, its folders' (they propagate down) and its shared drive's members. */
  effectivePermissions(fileId: string): DrivePermission[] {
    const seen = new Map<string, DrivePermission>();
    const add = (p: DrivePermission) => {
      if (!seen.has(p.id!)) seen.set(p.id!, { ...p });
    };
    let state: FileState | undefined = this.state(fileId);
    for (let depth = 0; state && depth < 100; depth++) {
      state.permissions.forEach(add);
      const parent: string | undefined = state.file.parents?.[0];
      state = parent === undefined ? undefined : this.files.get(parent);
    }
    const driveId = this.files.get(fileId)!.file.driveId;
    if (driveId) (this.members.get(driveId) ?? []).forEach(add);
    return [...seen.values()];
  }

  /**
   * A service account key (the JSON a Google Cloud console gives) whose `token_uri` is this fake's token endpoint (or
   * `tokenUri`). `subjects` are the users it may act as through domain-wide delegation.
   */
  serviceAccountKey(clientEmail = 'crs-connector@crs-test.iam.gserviceaccount.com', subjects: string[] = [], tokenUri?: string): string {
    this.keyPair ??= (() => {
      const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
      return { privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey: pair.publicKey };
    })();
    this.accounts.set(clientEmail, { publicKey: this.keyPair.publicKey, revoked: false, subjects: new Set(subjects.map((s) => s.toLowerCase())), issued: [] });
    return JSON.stringify({
      type: 'service_account',
      project_id: 'crs-test',
      private_key_id: createHash('sha1').update(clientEmail).digest('hex'),
      private_key: this.keyPair.privateKey,
      client_email: clientEmail,
      client_id: '100000000000000000001',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: tokenUri ?? `${this.url}/token`,
      auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
      client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(clientEmail)}`,
      universe_domain: 'googleapis.com',
    });
  }

  /** The key is deleted in the console: the token endpoint refuses it, and the tokens it gave stop working. */
  revokeServiceAccountKey(clientEmail = 'crs-connector@crs-test.iam.gserviceaccount.com'): void {
    const account = this.accounts.get(clientEmail)!;
    account.revoked = true;
    for (const token of account.issued) this.switches.revokeToken(token);
  }

  /** A new key for the same account: the token endpoint issues tokens again. */
  restoreServiceAccountKey(clientEmail = 'crs-connector@crs-test.iam.gserviceaccount.com'): void {
    this.accounts.get(clientEmail)!.revoked = false;
  }

  /**
   * The `nth` next request to `path` (the path without its query, or a RegExp on it) is throttled: 429 (or 403 with a rate-limit reason, Drive's
   * other form) with this Retry-After (seconds or an HTTP date; none when undefined).
   */
  throttle(path: string | RegExp, opts: { nth?: number; status?: 403 | 429; retryAfter?: string; reason?: string } = {}): void {
    this.throttles.push({ path, remaining: opts.nth ?? 1, status: opts.status ?? 429, reason: opts.reason ?? (opts.status === 403 ? 'userRateLimitExceeded' : 'rateLimitExceeded'), retryAfter: opts.retryAfter });
  }

  get url(): string {
    if (!this.running) throw new Error('the fake is not started');
    return this.running.url;
  }

  async start(): Promise<RunningFake> {
    const app = createFakeApp();
    app.addHook('onRequest', async (req, reply) => {
      if (req.url.split('?')[0] === '/token') return;
      const interruption = this.switches.intercept(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]);
      if (interruption !== undefined) return this.interrupt(reply, interruption);
      const throttle = this.dueThrottle(req.url);
      if (throttle) return this.interrupt(reply, { kind: 'rate-limited', retryAfterSeconds: 0 }, throttle);
    });
    app.addHook('onSend', async (req, reply) => {
      reply.header('date', new Date(this.clock).toUTCString());
      this.switches.answered(req.method, req.url);
    });
    app.setErrorHandler((error: { statusCode?: number; message: string; reason?: string }, _req, reply) => {
      const code = error.statusCode ?? 500;
      const reason = error.reason ?? (code === 404 ? 'notFound' : code === 400 ? 'invalid' : 'backendError');
      return reply.code(code).send({ error: { code, message: error.message, errors: [{ message: error.message, domain: 'global', reason }] } });
    });

    app.post('/token', (req, reply) => this.issueToken(req, reply));
    app.get('/drive/v3/about', (req) => this.masked(req, { kind: 'drive#about', user: { kind: 'drive#user', displayName: 'CRS connector', emailAddress: 'crs-connector@example.test' } } satisfies drive_v3.Schema$About));
    app.get('/drive/v3/drives', (req) => {
      const query = req.query as Record<string, string>;
      const { items, nextPageToken } = this.page('drives', this.drives, query, 10, 100);
      return this.masked(req, { kind: 'drive#driveList', drives: items, nextPageToken } satisfies drive_v3.Schema$DriveList, 'nextPageToken,kind,drives(id,name,kind)');
    });
    app.get('/drive/v3/drives/:driveId', (req) => this.masked(req, this.drive((req.params as { driveId: string }).driveId), 'id,name,kind'));
    app.get('/drive/v3/files', (req) => this.listFiles(req));
    app.get('/drive/v3/files/:fileId', (req, reply) => this.getFile(req, reply));
    app.get('/drive/v3/files/:fileId/export', (req, reply) => this.exportFile(req, reply));
    app.get('/drive/v3/files/:fileId/permissions', (req) => {
      const query = req.query as Record<string, string>;
      const fileId = (req.params as { fileId: string }).fileId;
      // A shared drive's id lists its members; a file's id every grant in force on it.
      const grants = this.members.has(fileId) ? this.members.get(fileId)! : this.effectivePermissions(fileId);
      const { items, nextPageToken } = this.page('permissions', grants, query, 100, 100);
      return this.masked(req, { kind: 'drive#permissionList', permissions: items, nextPageToken } satisfies drive_v3.Schema$PermissionList, 'nextPageToken,kind,permissions(id,type,kind,role)');
    });
    app.get('/drive/v3/changes/startPageToken', (req) => this.masked(req, { kind: 'drive#startPageToken', startPageToken: String(this.position + 1) } satisfies drive_v3.Schema$StartPageToken));
    app.get('/drive/v3/changes', (req) => this.listChanges(req));
    this.running = await listenOnLoopback(app);
    this.closeConnections = () => app.server.closeAllConnections();
    return this.running;
  }

  /** The listing's `nextPageToken` repeats the token it was asked with: a server whose paging never ends. */
  repeatPageTokens(endpoint: PagedEndpoint): void {
    this.endless.add(endpoint);
  }

  /** The file's download (or export) sends its bytes, then neither ends nor fails: a server that hangs mid-answer. */
  stallDownload(fileId: string): void {
    this.stalled.add(fileId);
  }

  /** The file's metadata gives this `size` whatever its bytes are: a file that grew after Drive measured it. */
  misreportSize(fileId: string, size: number): void {
    this.state(fileId).file.size = String(size);
  }

  async stop(): Promise<void> {
    this.closeConnections?.();
    await this.running?.close();
    this.running = undefined;
  }

  private dueThrottle(url: string): Throttle | undefined {
    const path = url.split('?')[0];
    const rule = this.throttles.find((t) => (typeof t.path === 'string' ? path === t.path : t.path.test(path)));
    if (!rule || --rule.remaining > 0) return undefined;
    this.throttles.splice(this.throttles.indexOf(rule), 1);
    return rule;
  }

  private interrupt(reply: FastifyReply, interruption: Interruption, throttle?: Throttle) {
    switch (interruption.kind) {
      case 'rate-limited': {
        const status = throttle?.status ?? 429;
        const reason = throttle?.reason ?? 'rateLimitExceeded';
        const retryAfter = throttle ? throttle.retryAfter : String(interruption.retryAfterSeconds);
        if (retryAfter !== undefined) reply.header('retry-after', retryAfter);
        return reply.code(status).send({
          error: { code: status, message: 'Rate limit exceeded', errors: [{ message: 'Rate limit exceeded', domain: 'usageLimits', reason }], ...(status === 429 ? { status: 'RESOURCE_EXHAUSTED' } : {}) },
        });
      }
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

  /**
   * Google's token endpoint for service accounts: a form with `grant_type` jwt-bearer and a signed `assertion` (RS256,
   * `iss` the account, `aud` this endpoint, at most an hour from `iat` to `exp`, `sub` a user to act as). Refusals
   * are OAuth errors: `invalid_grant` (a deleted key, a bad signature or times), `unauthorized_client` (delegation not
   * granted for the subject).
   */
  private issueToken(req: FastifyRequest, reply: FastifyReply) {
    const refuse = (status: number, error: string, description: string) => reply.code(status).send({ error, error_description: description });
    const form = (req.body ?? {}) as Record<string, string>;
    if (form.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse(400, 'unsupported_grant_type', 'Invalid grant_type: ' + (form.grant_type ?? ''));
    const [header, claims, signature] = String(form.assertion ?? '').split('.');
    let parsed: { header: { alg?: string }; claims: { iss?: string; aud?: string; iat?: number; exp?: number; sub?: string; scope?: string } };
    try {
      parsed = { header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')), claims: JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) };
    } catch {
      return refuse(400, 'invalid_grant', 'Invalid JWT: could not be parsed.');
    }
    const account = this.accounts.get(parsed.claims.iss ?? '');
    if (!account) return refuse(400, 'invalid_grant', 'Invalid grant: account not found');
    const valid = parsed.header.alg === 'RS256' && createVerify('RSA-SHA256').update(`${header}.${claims}`).verify(account.publicKey, Buffer.from(signature ?? '', 'base64url'));
    if (!valid || account.revoked) return refuse(400, 'invalid_grant', 'Invalid JWT Signature.');
    const now = Math.floor(Date.now() / 1000);
    const { iat = 0, exp = 0 } = parsed.claims;
    if (exp - iat > 3600 || iat > now + 300 || exp < now) return refuse(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
    if (parsed.claims.aud !== `${this.url}/token`) return refuse(400, 'invalid_grant', 'Invalid JWT: audience is not the token endpoint.');
    if (!parsed.claims.scope) return refuse(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    if (parsed.claims.sub !== undefined && !account.subjects.has(parsed.claims.sub.toLowerCase())) return refuse(401, 'unauthorized_client', 'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.');
    const token = `ya29.sa-${++this.issued}`;
    account.issued.push(token);
    this.validTokens.add(token);
    return reply.send({ access_token: token, expires_in: 3599, token_type: 'Bearer', scope: parsed.claims.scope });
  }

  /** Files matching `q`, in `driveId` when given, ordered by `orderBy` (name or modifiedTime) or else by id. */
  private listFiles(req: FastifyRequest) {
    const query = req.query as Record<string, string>;
    const orderBy = (query.orderBy ?? '').split(',')[0]?.trim() ?? '';
    const [orderField, descending] = [orderBy.split(' ')[0], orderBy.endsWith(' desc')];
    if (query.driveId !== undefined) this.drive(query.driveId);
    const files = [...this.files.values()]
      .filter((s) => query.driveId === undefined || s.file.driveId === query.driveId)
      .filter((s) => matchesQuery(s.file, query.q, this.myDriveRoot))
      .map((s) => this.resource(s))
      .sort((a, b) => {
        const key = orderField === 'name' || orderField === 'modifiedTime' ? orderField : 'id';
        const order = String(a[key]).localeCompare(String(b[key])) || a.id!.localeCompare(b.id!);
        return descending ? -order : order;
      });
    const { items, nextPageToken } = this.page('files', files, query, 100, 1000);
    const body: drive_v3.Schema$FileList = { kind: 'drive#fileList', incompleteSearch: false, files: items, nextPageToken };
    return this.masked(req, body, 'nextPageToken,kind,incompleteSearch,files(id,name,mimeType,kind)');
  }

  /** Metadata by default; the bytes with `alt=media`, as a download would return them (none for a Docs editors file). */
  private getFile(req: FastifyRequest, reply: FastifyReply) {
    const state = this.state((req.params as { fileId: string }).fileId);
    if ((req.query as Record<string, string>).alt === 'media') {
      if (state.file.mimeType! in EXPORTS || state.file.mimeType === FOLDER) {
        throw Object.assign(new Error('Only files with binary content can be downloaded. Use Export with Docs Editors files.'), { statusCode: 403, reason: 'fileNotDownloadable' });
      }
      return this.sendBytes(req, reply, state, state.file.mimeType ?? 'application/octet-stream');
    }
    return this.masked(req, this.resource(state), 'id,name,mimeType,kind');
  }

  /** A Docs editors file in one of its export formats. */
  private exportFile(req: FastifyRequest, reply: FastifyReply) {
    const state = this.state((req.params as { fileId: string }).fileId);
    const mimeType = (req.query as Record<string, string>).mimeType;
    const formats = EXPORTS[state.file.mimeType ?? ''];
    if (!formats) throw Object.assign(new Error('Export only supports Docs Editors files.'), { statusCode: 403, reason: 'fileNotExportable' });
    if (!formats.includes(mimeType)) throw Object.assign(new Error(`The requested conversion is not supported: ${mimeType}`), { statusCode: 400, reason: 'badRequest' });
    if (Buffer.byteLength(state.content) > EXPORT_LIMIT_BYTES) throw Object.assign(new Error('This file is too large to be exported.'), { statusCode: 403, reason: 'exportSizeLimitExceeded' });
    return this.sendBytes(req, reply, state, mimeType);
  }

  /** A file's bytes; for a stalled file, the bytes and then nothing, the answer left open (no Content-Length). */
  private sendBytes(req: FastifyRequest, reply: FastifyReply, state: FileState, mimeType: string) {
    if (!this.stalled.has(state.file.id!)) return reply.type(mimeType).send(state.content);
    reply.hijack();
    this.switches.answered(req.method, req.url);
    reply.raw.writeHead(200, { 'content-type': mimeType, date: new Date(this.clock).toUTCString() });
    reply.raw.write(state.content);
    return reply;
  }

  /**
   * Changes after the page token, one per file or shared drive at its latest change, each with the item as it is now
   * (or `removed: true` once deleted). With `driveId`, that shared drive's changes; without, My Drive's, and every
   * drive's with `includeItemsFromAllDrives`. The last page carries `newStartPageToken`, the token of the next sync.
   */
  private listChanges(req: FastifyRequest) {
    const query = req.query as Record<string, string>;
    if (query.pageToken === undefined) throw Object.assign(new Error('Required parameter: pageToken'), { statusCode: 400 });
    const after = Number(query.pageToken);
    const allDrives = query.includeItemsFromAllDrives === 'true';
    const pending = this.changes
      .filter((c) => c.position >= after)
      .filter((c) => (query.driveId !== undefined ? c.driveId === query.driveId : allDrives || c.driveId === null))
      .sort((a, b) => a.position - b.position);
    const size = this.switches.pageSize(Number(query.pageSize), 100, 1000);
    const items = pending.slice(0, size);
    const next = pending[size];
    const changes: DriveChange[] = items.map((c) => {
      if (c.kind === 'drive') {
        const drive = this.drives.find((d) => d.id === c.id);
        return drive === undefined
          ? { kind: 'drive#change', changeType: 'drive', driveId: c.id, removed: true, time: c.time }
          : { kind: 'drive#change', changeType: 'drive', driveId: c.id, removed: false, time: c.time, drive: { ...drive } };
      }
      const state = this.files.get(c.id);
      return state === undefined
        ? { kind: 'drive#change', changeType: 'file', fileId: c.id, removed: true, time: c.time, ...(c.driveId ? { driveId: c.driveId } : {}) }
        : { kind: 'drive#change', changeType: 'file', fileId: c.id, removed: false, time: c.time, file: this.resource(state), ...(c.driveId ? { driveId: c.driveId } : {}) };
    });
    const body: drive_v3.Schema$ChangeList = {
      kind: 'drive#changeList',
      changes,
      ...(this.endless.has('changes') ? { nextPageToken: query.pageToken } : next === undefined ? { newStartPageToken: String(this.position + 1) } : { nextPageToken: String(next.position) }),
    };
    return this.masked(req, body, 'kind,nextPageToken,newStartPageToken,changes(kind,changeType,time,removed,fileId,file(id,name,mimeType,kind))');
  }

  private page<T>(endpoint: PagedEndpoint, items: T[], query: Record<string, string>, endpointDefault: number, endpointMax: number) {
    const offset = decodeToken(query.pageToken);
    const size = this.switches.pageSize(Number(query.pageSize), endpointDefault, endpointMax);
    if (this.endless.has(endpoint)) return { items: items.slice(offset, offset + size), nextPageToken: query.pageToken ?? encodeToken(offset + size) };
    return { items: items.slice(offset, offset + size), nextPageToken: offset + size < items.length ? encodeToken(offset + size) : undefined };
  }

  /** The response cut to `fields`, or to Drive's default fields for this endpoint when none are asked for. */
  private masked<T>(req: FastifyRequest, body: T, defaults = '*'): T {
    const fields = (req.query as Record<string, string>).fields ?? defaults;
    return applyFieldMask(body, parseFieldMask(fields)) as T;
  }

  /** A file as Drive returns it: the grant ids always, the grants themselves only outside shared drives. */
  private resource(state: FileState): DriveFile {
    const grants = this.effectivePermissions(state.file.id!);
    return { ...state.file, ...(state.file.driveId ? {} : { permissions: grants }), permissionIds: grants.map((p) => p.id!) };
  }

  /** Bytes, checksum and size: Docs editors files and folders have no checksum. */
  private bytesFields(mimeType: string, content: string): Pick<DriveFile, 'md5Checksum' | 'size'> {
    if (mimeType === FOLDER) return {};
    if (mimeType in EXPORTS) return { size: String(Buffer.byteLength(content)) };
    return { md5Checksum: createHash('md5').update(content).digest('hex'), size: String(Buffer.byteLength(content)) };
  }

  private recordChange(kind: 'file' | 'drive', id: string, driveId: string | null): void {
    const existing = this.changes.findIndex((c) => c.kind === kind && c.id === id);
    if (existing >= 0) this.changes.splice(existing, 1);
    this.changes.push({ position: ++this.position, kind, id, driveId, time: this.tick() });
  }

  /** A clock that moves a minute per event, so times are distinct and ordered without depending on the wall clock. */
  private tick(): string {
    this.clock += 60_000;
    return new Date(this.clock).toISOString();
  }

  private drive(driveId: string): drive_v3.Schema$Drive {
    const drive = this.drives.find((d) => d.id === driveId);
    if (drive === undefined) throw Object.assign(new Error(`Shared drive not found: ${driveId}`), { statusCode: 404 });
    return drive;
  }

  private state(fileId: string): FileState {
    const state = this.files.get(fileId);
    if (state === undefined) throw Object.assign(new Error(`File not found: ${fileId}.`), { statusCode: 404 });
    return state;
  }
}
