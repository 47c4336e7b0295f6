import type { LookupFn } from '@crs/network/address-policy';
import { publicOnlyAgents } from '@crs/network/public-agents';
import { ConfigurationError, DocumentError, isProviderError } from '../../provider-errors';
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
import { connect, GITHUB_API_URL, type ConnectedClient, type GitHubClient } from './github-client';
import { decodeCursor, encodeCursor, type GitHubCursor } from './github-cursor';
import { githubError, isStatus } from './github-errors';
import { GitHubFetchError } from './github-fetch';
import {
  decodeText,
  FILTERABLE_FIELDS,
  fileDocument,
  fileHash,
  isPullRequest,
  isSelectedFile,
  issueDocument,
  issueHash,
  issueId,
  parseIssueId,
  parseRepository,
  RESOURCE_OPTIONS,
  syncOptions,
  type GitHubIssue,
  type GitHubIssueComment,
  type GitHubRepository,
  type GitHubTreeEntry,
  type RepositoryName,
  type SyncOptions,
} from './github-mapping';
import { DEFAULT_MAX_PAGES, guardedPages, hasNextPage } from './github-pages';
import { inspectPermissions, type PermissionReport } from './github-permissions';

export interface GitHubProviderOptions {
  /**
   * Whether a `base_url` in the credentials may lead to a loopback, private, link-local or reserved address
   * (CONNECTOR_ALLOW_PRIVATE_NETWORKS; development and tests). Off by default: such a target is refused with a
   * TargetForbiddenError before any call, and every connection to a user-given URL checks its addresses again when
   * it connects.
   */
  allowPrivateNetworks?: boolean;
  /** The API origin for credentials without `base_url` (default https://api.github.com); an operator setting only. */
  apiUrl?: string;
  /** Throttling waits up to this many seconds are slept through by the client; longer ones defer the sync (default 3). */
  shortWaitSeconds?: number;
  /** Retries of a 5xx or network error before it becomes a TransientError (default 2). */
  serverErrorRetries?: number;
  /** Base of the retry backoff, (n + 1)² × this in milliseconds (default 1000: 1 s, then 4 s). */
  retryBaseMs?: number;
  /** Files read between two checkpoints unless a resource sets `page_size` (default 50). */
  filePageSize?: number;
  /** A file larger than this is not synced (a `failure` event when it changes); an issue's text is cut there (default 1 MiB). */
  maxDocumentBytes?: number;
  /** How far before the last sync's server time an issue sync asks from (`since`), for late-visible updates (default 5 minutes). */
  sinceOverlapMs?: number;
  /** Name resolution for the private-network checks (tests replace it). */
  lookup?: LookupFn;
  /** The most bytes read of one API response other than a file's blob (default 16 MiB); more is a ConfigurationError. */
  maxResponseBytes?: number;
  /** The overall deadline of one API call, redirects included (default 60 s); past it the call is a TransientError. */
  requestTimeoutMs?: number;
  /** The most pages read of one listing (default 10,000); more is a ConfigurationError. */
  maxPages?: number;
}

export const GITHUB_PROVIDER: ProviderDescription = {
  id: 'github',
  name: 'GitHub repositories',
  credentialFields: [
    {
      name: 'token',
      description:
        'A GitHub token that may read the repositories to sync: a fine-grained token with read access to Metadata, Contents, Issues and Pull requests, or a classic token (repo scope for private repositories). Capturing a private repository\'s collaborators needs push access.',
      required: true,
      secret: true,
    },
    {
      name: 'base_url',
      description: 'For GitHub Enterprise Server only: the API URL, such as https://github.example.com/api/v3. Omit it for github.com.',
      required: false,
      secret: false,
    },
  ],
  filterableFields: FILTERABLE_FIELDS,
  resourceOptions: RESOURCE_OPTIONS,
  capturesPermissions: true,
};

/** Concurrent comment listings while reading a page of issues. */
const COMMENT_CONCURRENCY = 4;

/**
 * The most bytes of a blob's answer read for a file of up to `maxDocumentBytes`: its base64 (4 characters for every 3
 * bytes, with a line break of two JSON characters every 60) and room for the answer's other fields.
 */
const blobAnswerLimit = (maxDocumentBytes: number): number => Math.ceil((Math.ceil(maxDocumentBytes / 3) * 4 * 62) / 60) + 16 * 1024;

/**
 * The code-host provider (docs/providers/github.md): repositories as resources; their README and docs/ files on the
 * default branch, their issues and their pull requests as documents; the repository's visibility and collaborators as
 * the resource-level permission (rule 11).
 */
export class GitHubProvider implements ConnectorProvider {
  readonly description = GITHUB_PROVIDER;
  private readonly settings: Parameters<typeof connect>[1];
  private readonly filePageSize: number;
  private readonly maxDocumentBytes: number;
  private readonly sinceOverlapMs: number;
  private readonly maxPages: number;
  /**
   * Repository records read with a context, by full name. The sync engine hands one context object to every call of
   * one sync (permission capture, listing, crawl, re-reads), so the record is read once per sync and not once per
   * call; a new sync brings a new context and so a fresh read, and the entries go with the context.
   */
  private readonly repositoryReads = new WeakMap<ProviderContext, Map<string, Promise<GitHubRepository>>>();

  constructor(options: GitHubProviderOptions = {}) {
    this.settings = {
      apiUrl: options.apiUrl ?? GITHUB_API_URL,
      allowPrivateNetworks: options.allowPrivateNetworks ?? false,
      shortWaitSeconds: options.shortWaitSeconds ?? 3,
      serverErrorRetries: options.serverErrorRetries ?? 2,
      retryBaseMs: options.retryBaseMs ?? 1000,
      ...(options.lookup ? { lookup: options.lookup } : {}),
      publicAgents: publicOnlyAgents(options.lookup ? { lookup: options.lookup } : {}),
      maxResponseBytes: options.maxResponseBytes ?? 16 * 1024 * 1024,
      requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
    };
    this.maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
    this.filePageSize = options.filePageSize ?? 50;
    this.maxDocumentBytes = options.maxDocumentBytes ?? 1024 * 1024;
    this.sinceOverlapMs = options.sinceOverlapMs ?? 5 * 60_000;
  }

  async validateCredentials(ctx: ProviderContext): Promise<AccountIdentity> {
    const { client, host } = await connect(ctx, this.settings);
    try {
      const res = await client.users.getAuthenticated();
      const warnings: string[] = [];
      const scopes = String(res.headers['x-oauth-scopes'] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      const wide = scopes.filter((s) => s === 'delete_repo' || s.startsWith('admin:') || s === 'write:org' || s === 'workflow');
      if (wide.length) warnings.push(`The token also has the scopes ${wide.join(', ')}. The connector only reads; a token without them is safer.`);
      const login = res.data.login;
      return { accountScope: `${host}/${login}`.toLowerCase(), displayName: `${login} on ${host}`, warnings };
    } catch (err) {
      throw githubError(err, 'the account of the token', host);
    }
  }

  async discoverResources(ctx: ProviderContext): Promise<DiscoveredResource[]> {
    const { client, host } = await connect(ctx, this.settings);
    const out: DiscoveredResource[] = [];
    try {
      for await (const page of guardedPages(client.paginate.iterator(client.repos.listForAuthenticatedUser, { per_page: 100, sort: 'full_name' }), 'the repositories of the token', host, this.maxPages)) {
        ctx.signal?.throwIfAborted();
        for (const r of page.data) {
          out.push({
            resourceId: r.full_name,
            resourceType: 'repository',
            name: r.full_name,
            details: { visibility: r.visibility ?? (r.private ? 'private' : 'public'), default_branch: r.default_branch, archived: r.archived, has_issues: r.has_issues, description: r.description },
          });
        }
      }
    } catch (err) {
      throw this.error(ctx, err, 'the repositories of the token', host);
    }
    return out;
  }

  async capturePermissions(ctx: ProviderContext, resource: ResourceConfig): Promise<ResourcePermission> {
    return (await this.inspectPermissions(ctx, resource)).verdict;
  }

  /** The capture with what it found: visibility, collaborators, and those left unresolved (no public email). */
  async inspectPermissions(ctx: ProviderContext, resource: ResourceConfig): Promise<PermissionReport> {
    const repository = parseRepository(resource.resourceId);
    const conn = await connect(ctx, this.settings);
    const { client, host } = conn;
    const record = await this.repositoryRecord(ctx, conn, repository);
    try {
      return await inspectPermissions(client, repository, record, host, { ...(ctx.signal ? { signal: ctx.signal } : {}), maxPages: this.maxPages });
    } catch (err) {
      throw this.error(ctx, err, `the permissions of ${repository.fullName}`, host);
    }
  }

  async *sync(ctx: ProviderContext, resource: ResourceConfig, raw: SyncCursor | null): AsyncIterable<SyncEvent> {
    const repository = parseRepository(resource.resourceId);
    const options = syncOptions(resource, this.filePageSize);
    const conn = await connect(ctx, this.settings);
    const cursor = decodeCursor(raw, options.selectionKey);
    const repo = await this.repositoryRecord(ctx, conn, repository);

    // No file pattern: no file is read, and the branch is not even looked at.
    const head = options.patterns.length ? await this.head(ctx, conn, repository, repo.default_branch) : null;
    const pending = cursor.files.pending ?? (head !== null && head !== cursor.files.commit ? { base: cursor.files.commit, target: head, done: 0 } : undefined);
    if (pending) {
      const changed = await this.changedFiles(ctx, conn, repository, options, pending.base, pending.target);
      for (let i = pending.done; i < changed.length; i += options.filePageSize) {
        ctx.signal?.throwIfAborted();
        for (const entry of changed.slice(i, i + options.filePageSize)) yield await this.fileEvent(ctx, conn, repository, entry, repo.html_url, repo.default_branch);
        pending.done = Math.min(i + options.filePageSize, changed.length);
        if (pending.done < changed.length) yield checkpoint({ ...cursor, files: { commit: cursor.files.commit, pending } });
      }
      cursor.files = { commit: pending.target };
    }

    if (options.issues || options.pullRequests) {
      const crawl = cursor.issues.pending ?? { since: cursor.issues.since, until: '', page: 1 };
      const since = crawl.since === null ? undefined : new Date(Date.parse(crawl.since) - this.sinceOverlapMs).toISOString();
      for (;;) {
        ctx.signal?.throwIfAborted();
        const res = await this.issuePage(ctx, conn, repository, since, crawl.page, options.issuePageSize);
        if (res === null) break;
        if (crawl.until === '') crawl.until = serverTime(res.headers.date);
        yield* await this.issueEvents(ctx, conn, repository, options, res.data);
        if (!hasNextPage(res.headers.link, crawl.page, `the issues of ${repository.fullName}`, conn.host, this.maxPages)) break;
        crawl.page++;
        yield checkpoint({ ...cursor, issues: { since: cursor.issues.since, pending: crawl } });
      }
      cursor.issues = { since: crawl.until === '' ? new Date().toISOString() : crawl.until };
    }
    yield checkpoint(cursor);
  }

  async *listExistingIds(ctx: ProviderContext, resource: ResourceConfig): AsyncIterable<ExistingDocument> {
    const repository = parseRepository(resource.resourceId);
    const options = syncOptions(resource, this.filePageSize);
    const conn = await connect(ctx, this.settings);
    const repo = await this.repositoryRecord(ctx, conn, repository);
    for (const entry of options.patterns.length ? await this.files(ctx, conn, repository, options, repo.default_branch) : []) {
      if ((entry.size ?? 0) <= this.maxDocumentBytes) yield { id: entry.path!, contentHash: fileHash(entry.path!, entry.sha!) };
    }
    if (!options.issues && !options.pullRequests) return;
    for (let page = 1; ; page++) {
      ctx.signal?.throwIfAborted();
      const res = await this.issuePage(ctx, conn, repository, undefined, page, 100);
      if (res === null) return;
      for (const issue of res.data) if (wanted(issue, options)) yield { id: issueId(issue.number), contentHash: issueHash(issue) };
      if (!hasNextPage(res.headers.link, page, `the issues of ${repository.fullName}`, conn.host, this.maxPages)) return;
    }
  }

  async *fetchDocuments(ctx: ProviderContext, resource: ResourceConfig, ids: readonly string[]): AsyncIterable<SyncEvent> {
    const repository = parseRepository(resource.resourceId);
    const options = syncOptions(resource, this.filePageSize);
    const conn = await connect(ctx, this.settings);
    const paths = ids.filter((id) => parseIssueId(id) === undefined);
    if (paths.length) {
      const repo = await this.repositoryRecord(ctx, conn, repository);
      const files = new Map((await this.files(ctx, conn, repository, options, repo.default_branch)).map((e) => [e.path!, e]));
      for (const path of paths) {
        ctx.signal?.throwIfAborted();
        const entry = files.get(path);
        yield entry ? await this.fileEvent(ctx, conn, repository, entry, repo.html_url, repo.default_branch) : { kind: 'delete', id: path };
      }
    }
    for (const id of ids) {
      const issueNumber = parseIssueId(id);
      if (issueNumber === undefined) continue;
      ctx.signal?.throwIfAborted();
      let issue: GitHubIssue;
      try {
        issue = (await conn.client.issues.get({ owner: repository.owner, repo: repository.repo, issue_number: issueNumber })).data as GitHubIssue;
      } catch (err) {
        if (isStatus(err, 404, 410)) {
          yield { kind: 'delete', id };
          continue;
        }
        throw this.error(ctx, err, `issue #${issueNumber} of ${repository.fullName}`, conn.host);
      }
      // A transferred issue answers from its new repository (GitHub redirects): it is gone from this one.
      const here = issue.repository_url.toLowerCase().endsWith(`/repos/${repository.fullName.toLowerCase()}`);
      if (!here || !wanted(issue, options)) yield { kind: 'delete', id };
      else yield* await this.issueEvents(ctx, conn, repository, options, [issue]);
    }
  }

  /** The repository's record (visibility, default branch, links), read once per context; a failed read is not kept. */
  private repositoryRecord(ctx: ProviderContext, conn: ConnectedClient, repository: RepositoryName): Promise<GitHubRepository> {
    let reads = this.repositoryReads.get(ctx);
    if (reads === undefined) this.repositoryReads.set(ctx, (reads = new Map()));
    const known = reads.get(repository.fullName);
    if (known !== undefined) return known;
    const read = this.call(ctx, conn, `the repository ${repository.fullName}`, async () => (await conn.client.repos.get({ owner: repository.owner, repo: repository.repo })).data);
    reads.set(repository.fullName, read);
    read.catch(() => reads.delete(repository.fullName));
    return read;
  }

  /** The default branch's head commit; null for a repository with no commits yet. */
  private async head(ctx: ProviderContext, conn: ConnectedClient, repository: RepositoryName, branch: string): Promise<string | null> {
    try {
      return (await conn.client.git.getRef({ owner: repository.owner, repo: repository.repo, ref: `heads/${branch}` })).data.object.sha;
    } catch (err) {
      if (isStatus(err, 409)) return null;
      throw this.error(ctx, err, `the default branch ${branch} of ${repository.fullName}`, conn.host);
    }
  }

  /** The selected files of a commit (or branch), from its recursive tree: one call. */
  private async files(ctx: ProviderContext, conn: ConnectedClient, repository: RepositoryName, options: SyncOptions, treeish: string): Promise<GitHubTreeEntry[]> {
    let tree;
    try {
      tree = (await conn.client.git.getTree({ owner: repository.owner, repo: repository.repo, tree_sha: treeish, recursive: 'true' })).data;
    } catch (err) {
      // An empty repository has no tree.
      if (isStatus(err, 409)) return [];
      throw this.error(ctx, err, `the files of ${repository.fullName} at ${treeish}`, conn.host);
    }
    if (tree.truncated) {
      throw new ConfigurationError(`${repository.fullName} has more files than GitHub lists in one tree (the listing was truncated), so the connector cannot tell which were deleted. Sync a smaller repository, or its issues only (paths: []).`);
    }
    return tree.tree.filter((e) => isSelectedFile(e, options)).sort((a, b) => (a.path! < b.path! ? -1 : a.path! > b.path! ? 1 : 0));
  }

  /**
   * The selected files of `target` that are new or changed since `base` (their blob id differs), sorted by path;
   * every selected file when there is no base or its tree is no longer there. Removed files are not here: pruning
   * finds them in the listing, behind the mass-deletion guard.
   */
  private async changedFiles(ctx: ProviderContext, conn: ConnectedClient, repository: RepositoryName, options: SyncOptions, base: string | null, target: string): Promise<GitHubTreeEntry[]> {
    const now = await this.files(ctx, conn, repository, options, target);
    if (base === null) return now;
    let before: GitHubTreeEntry[];
    try {
      before = await this.files(ctx, conn, repository, options, base);
    } catch (err) {
      // The base commit is gone (a force-push followed by garbage collection): read every selected file again.
      if (isProviderError(err) && err.kind === 'resource_gone') return now;
      throw err;
    }
    const previous = new Map(before.map((e) => [e.path!, e.sha]));
    return now.filter((e) => previous.get(e.path!) !== e.sha);
  }

  /**
   * One file as an upsert, or a failure when it is over the size limit or not text. The size is checked three times:
   * from the tree (a larger file is not read), while its blob is read (its answer is read no further than a file of
   * the limit needs), and from the blob's size and bytes. Its link names the branch, not the commit, so a document
   * read again at a later commit with the same bytes is the same document.
   */
  private async fileEvent(ctx: ProviderContext, conn: ConnectedClient, repository: RepositoryName, entry: GitHubTreeEntry, htmlUrl: string, branch: string): Promise<SyncEvent> {
    const path = entry.path!;
    const max = this.maxDocumentBytes;
    const tooLarge = (size: number | undefined): SyncEvent => ({
      kind: 'failure',
      id: path,
      error: new DocumentError(size === undefined ? `${path} is larger than the ${max}-byte limit for a document; it is not synced.` : `${path} is ${size} bytes, over the ${max}-byte limit for a document; it is not synced.`),
    });
    if ((entry.size ?? 0) > max) return tooLarge(entry.size);
    let blob;
    try {
      blob = (await conn.client.git.getBlob({ owner: repository.owner, repo: repository.repo, file_sha: entry.sha!, request: { fetch: conn.fetchUpTo(blobAnswerLimit(max)) } })).data;
    } catch (err) {
      if (err instanceof GitHubFetchError && err.failure.kind === 'too-large') return tooLarge(undefined);
      throw this.error(ctx, err, `${path} in ${repository.fullName}`, conn.host);
    }
    const bytes = Buffer.from(blob.content, blob.encoding === 'base64' ? 'base64' : 'utf8');
    if (Math.max(blob.size ?? 0, bytes.length) > max) return tooLarge(Math.max(blob.size ?? 0, bytes.length));
    const text = decodeText(bytes);
    if (text === undefined) return { kind: 'failure', id: path, error: new DocumentError(`${path} is not UTF-8 text; it is not synced.`) };
    return { kind: 'upsert', doc: fileDocument(repository, path, entry.sha!, text, `${htmlUrl}/blob/${encodeURIComponent(branch)}`) };
  }

  /**
   * One page of the issue listing (pull requests included), open and closed, oldest created first: an issue edited
   * while the pages are read keeps its place, so none is skipped. Null when the repository has issues disabled.
   */
  private async issuePage(ctx: ProviderContext, conn: ConnectedClient, repository: RepositoryName, since: string | undefined, page: number, perPage: number) {
    try {
      return await conn.client.issues.listForRepo({
        owner: repository.owner, repo: repository.repo, state: 'all', per_page: perPage, page, sort: 'created', direction: 'asc', ...(since ? { since } : {}),
      });
    } catch (err) {
      if (isStatus(err, 410)) return null;
      throw this.error(ctx, err, `the issues of ${repository.fullName}`, conn.host);
    }
  }

  /**
   * Upserts for a page of issues: each with its comments (listed only when it has some), in the page's order. An
   * issue's comments are read until their text passes the document limit; the document is cut there anyway.
   */
  private async issueEvents(ctx: ProviderContext, conn: ConnectedClient, repository: RepositoryName, options: SyncOptions, issues: GitHubIssue[]): Promise<SyncEvent[]> {
    const selected = issues.filter((i) => wanted(i, options));
    const comments: GitHubIssueComment[][] = new Array(selected.length);
    let next = 0;
    const read = async () => {
      for (let i = next++; i < selected.length; i = next++) {
        const issue = selected[i];
        comments[i] = issue.comments === 0 ? [] : await this.call(ctx, conn, `the comments of #${issue.number} in ${repository.fullName}`, () => this.comments(conn, repository, issue.number));
      }
    };
    await Promise.all(Array.from({ length: Math.min(COMMENT_CONCURRENCY, selected.length) }, read));
    return selected.map((issue, i) => ({ kind: 'upsert', doc: issueDocument(repository, issue, comments[i], this.maxDocumentBytes) }));
  }

  /** An issue's comments, oldest first, until their text passes the document limit. */
  private async comments(conn: ConnectedClient, repository: RepositoryName, issueNumber: number): Promise<GitHubIssueComment[]> {
    const out: GitHubIssueComment[] = [];
    let bytes = 0;
    const pages = conn.client.paginate.iterator(conn.client.issues.listComments, { owner: repository.owner, repo: repository.repo, issue_number: issueNumber, per_page: 100 });
    for await (const page of guardedPages(pages, `the comments of #${issueNumber} in ${repository.fullName}`, conn.host, this.maxPages)) {
      for (const c of page.data) bytes += Buffer.byteLength(c.body ?? '');
      out.push(...page.data);
      if (bytes > this.maxDocumentBytes) break;
    }
    return out;
  }

  private async call<T>(ctx: ProviderContext, conn: ConnectedClient, what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.error(ctx, err, what, conn.host);
    }
  }

  /** A stop asked for by the caller surfaces as the signal's reason; every other failure as a ProviderError. */
  private error(ctx: ProviderContext, err: unknown, what: string, host: string): unknown {
    if (ctx.signal?.aborted) return ctx.signal.reason;
    return githubError(err, what, host);
  }
}

const wanted = (issue: GitHubIssue, options: SyncOptions): boolean => (isPullRequest(issue) ? options.pullRequests : options.issues);

const checkpoint = (cursor: GitHubCursor): SyncEvent => ({ kind: 'checkpoint', cursor: encodeCursor(cursor) });

/** The server's clock from a response's Date header (so a skewed local clock does not move the issue window). */
function serverTime(date: unknown): string {
  const at = typeof date === 'string' ? Date.parse(date) : Number.NaN;
  return new Date(Number.isNaN(at) ? Date.now() : at).toISOString();
}

export type { GitHubClient };
