import { createHash } from 'node:crypto';
import type { RestEndpointMethodTypes } from '@octokit/rest';
import { ConfigurationError } from '../../provider-errors';
import type { FilterableField, ResourceConfig, ResourceOption, SyncedDocument } from '../../provider.port';

export type GitHubRepository = RestEndpointMethodTypes['repos']['get']['response']['data'];
export type GitHubIssue = RestEndpointMethodTypes['issues']['listForRepo']['response']['data'][number];
export type GitHubIssueComment = RestEndpointMethodTypes['issues']['listComments']['response']['data'][number];
export type GitHubTreeEntry = RestEndpointMethodTypes['git']['getTree']['response']['data']['tree'][number];

/** Bumped when the way documents are made changes, so every hash changes with it and documents are written again. */
const FORMAT = 1;

/** The files synced when a resource sets no `paths`: the README at the root and every text file under docs/. */
export const DEFAULT_PATHS = ['README*', 'Readme*', 'readme*', 'docs/**'];

/**
 * Extensions of the files that are documents (markdown and plain text). A file with no extension (README, LICENSE,
 * CHANGES) counts as text too. Anything else (images, archives, source code) is never synced, whatever `paths` says.
 */
export const TEXT_EXTENSIONS = ['md', 'markdown', 'mdx', 'mdown', 'txt', 'text', 'rst', 'adoc', 'asciidoc', 'org'];

export const RESOURCE_OPTIONS: ResourceOption[] = [
  {
    name: 'paths',
    description: `Glob patterns of the default branch's files to sync (\`*\` within a folder, \`**\` across folders, \`?\` one character); only markdown and text files (${TEXT_EXTENSIONS.map((e) => `.${e}`).join(', ')}, or no extension) are synced. Default: ${JSON.stringify(DEFAULT_PATHS)}.`,
  },
  { name: 'include_issues', description: 'Whether issues are synced (title, body and comments). Default true.' },
  { name: 'include_pull_requests', description: 'Whether pull requests are synced (title, description and conversation comments). Default true.' },
  { name: 'page_size', description: 'Files (or issues, at most 100) read between two checkpoints. Default 50 files, 100 issues.' },
];

export const FILTERABLE_FIELDS: FilterableField[] = [
  { name: 'repository', type: 'string', description: 'The repository, as owner/name.' },
  { name: 'type', type: 'string', description: 'file, issue or pull_request.' },
  { name: 'path', type: 'string', description: "A file's path in the repository (null for issues and pull requests)." },
  { name: 'author', type: 'string', description: 'The login of whoever opened the issue or pull request (null for files).' },
  { name: 'labels', type: 'string', description: "An issue's or pull request's label names, sorted and comma-separated (null for files and unlabelled ones)." },
  { name: 'state', type: 'string', description: 'open or closed (null for files).' },
];

export interface RepositoryName {
  owner: string;
  repo: string;
  fullName: string;
}

export function parseRepository(resourceId: string): RepositoryName {
  const match = /^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)\/([A-Za-z0-9._-]+)$/.exec(resourceId.trim());
  if (!match || match[2] === '.' || match[2] === '..') throw new ConfigurationError(`"${resourceId}" is not a GitHub repository; a resource_id is owner/name, such as octo-org/handbook.`);
  return { owner: match[1], repo: match[2], fullName: `${match[1]}/${match[2]}` };
}

/** What a resource syncs, from its `options`. */
export interface SyncOptions {
  patterns: RegExp[];
  issues: boolean;
  pullRequests: boolean;
  filePageSize: number;
  issuePageSize: number;
  /** Identifies the settings that decide which documents exist: a cursor written under others starts over. */
  selectionKey: string;
}

function bool(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw new ConfigurationError(`The resource option "${name}" must be true or false.`);
  return value;
}

/** A glob as a regular expression over a whole path: `**` spans folders, `*` and `?` stay within one. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

export function syncOptions(resource: ResourceConfig, defaultFilePageSize: number): SyncOptions {
  const o = resource.options ?? {};
  const paths = o.paths ?? DEFAULT_PATHS;
  if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string' || p.trim() === '')) throw new ConfigurationError('The resource option "paths" must be a list of glob patterns, such as ["README.md", "docs/**"].');
  const pageSize = o.page_size;
  if (pageSize !== undefined && (typeof pageSize !== 'number' || !Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)) throw new ConfigurationError('The resource option "page_size" must be a whole number from 1 to 1000.');
  const patterns = (paths as string[]).map((p) => p.trim().replace(/^\/+/, ''));
  const issues = bool(o.include_issues, 'include_issues', true);
  const pullRequests = bool(o.include_pull_requests, 'include_pull_requests', true);
  return {
    patterns: patterns.map(globToRegExp),
    issues,
    pullRequests,
    filePageSize: pageSize ?? defaultFilePageSize,
    issuePageSize: Math.min(pageSize ?? 100, 100),
    selectionKey: digest([FORMAT, [...patterns].sort(), issues, pullRequests]).slice(0, 16),
  };
}

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

function hasTextExtension(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return true;
  return TEXT_EXTENSIONS.includes(name.slice(dot + 1).toLowerCase());
}

/**
 * Whether a tree entry is a file the resource syncs: a blob (not a folder, a submodule or a symbolic link), a text
 * file by its extension, matched by a pattern, and not starting with `#` (issue ids are `#<number>`).
 */
export function isSelectedFile(entry: Pick<GitHubTreeEntry, 'path' | 'type' | 'mode'>, options: SyncOptions): boolean {
  const path = entry.path ?? '';
  return entry.type === 'blob' && entry.mode !== '120000' && path !== '' && !path.startsWith('#') && hasTextExtension(path) && options.patterns.some((p) => p.test(path));
}

/** A file's document id is its path; an issue's or pull request's is `#<number>` (they share one number space). */
export const issueId = (issueNumber: number): string => `#${issueNumber}`;
export function parseIssueId(id: string): number | undefined {
  const match = /^#([1-9][0-9]*)$/.exec(id);
  return match ? Number(match[1]) : undefined;
}

/** A file's hash: its path and git blob id (which changes exactly when its bytes do). */
export const fileHash = (path: string, blobSha: string): string => digest([FORMAT, 'file', path, blobSha]);

export const isPullRequest = (issue: GitHubIssue): boolean => issue.pull_request !== undefined && issue.pull_request !== null;

function labelNames(issue: GitHubIssue): string[] {
  return issue.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter((n) => n !== '').sort();
}

/**
 * An issue's hash, from what the issue listing shows: title, body, state, labels, author, comment count and
 * `updated_at` (which GitHub moves on every edit and new comment), so the listing that pruning reads gives the same
 * hash a sync gives, and an edit whose `updated_at` was set into the past still shows as a different hash.
 */
export function issueHash(issue: GitHubIssue): string {
  return digest([FORMAT, isPullRequest(issue) ? 'pull_request' : 'issue', issue.number, issue.title, issue.body ?? '', issue.state, labelNames(issue), issue.user?.login ?? null, issue.comments, issue.updated_at]);
}

export function fileDocument(repository: RepositoryName, path: string, blobSha: string, text: string, htmlBase: string | undefined): SyncedDocument {
  return {
    id: path,
    title: `${repository.fullName}: ${path}`,
    content: { kind: 'text', text },
    updatedAt: null,
    contentHash: fileHash(path, blobSha),
    metadata: { repository: repository.fullName, type: 'file', path, blob_sha: blobSha, ...(htmlBase ? { url: `${htmlBase}/${path.split('/').map(encodeURIComponent).join('/')}` } : {}) },
    filterableFields: { repository: repository.fullName, type: 'file', path, author: null, labels: null, state: null },
  };
}

/**
 * An issue or pull request as one document: a header line (number, kind, state, author, labels), the body, then the
 * comments oldest first, each with its author and time. Text beyond `maxBytes` is cut at a comment boundary with a
 * note saying how many comments were left out (of the issue's comment count, as `comments` may stop at the limit).
 */
export function issueDocument(repository: RepositoryName, issue: GitHubIssue, comments: GitHubIssueComment[], maxBytes: number): SyncedDocument {
  const kind = isPullRequest(issue) ? 'pull_request' : 'issue';
  const labels = labelNames(issue);
  const author = issue.user?.login ?? null;
  const header = `#${issue.number} · ${kind === 'pull_request' ? 'pull request' : 'issue'} · ${issue.state}${author ? ` · opened by ${author}` : ''}${labels.length ? ` · labels: ${labels.join(', ')}` : ''}`;
  let text = `${issue.title}\n${header}\n\n${(issue.body ?? '').trim()}\n`;
  let omitted = 0;
  for (const [i, c] of comments.entries()) {
    const part = `\n---\n${c.user?.login ?? 'someone'} commented on ${c.created_at}:\n\n${(c.body ?? '').trim()}\n`;
    if (Buffer.byteLength(text) + Buffer.byteLength(part) > maxBytes) {
      // comments may have been read only up to the limit: the issue's count says how many there are
      omitted = Math.max(comments.length, issue.comments) - i;
      break;
    }
    text += part;
  }
  if (omitted) text += `\n[${omitted} later comment${omitted === 1 ? '' : 's'} not included: the document reached its size limit]\n`;
  if (Buffer.byteLength(text) > maxBytes) text = Buffer.from(text).subarray(0, maxBytes).toString('utf8').replace(/\uFFFD+$/, '');
  return {
    id: issueId(issue.number),
    title: issue.title,
    content: { kind: 'text', text },
    updatedAt: new Date(issue.updated_at).toISOString(),
    contentHash: issueHash(issue),
    metadata: {
      repository: repository.fullName, type: kind, number: issue.number, url: issue.html_url, state: issue.state, author, labels,
      created_at: issue.created_at, closed_at: issue.closed_at, comments: issue.comments,
    },
    filterableFields: { repository: repository.fullName, type: kind, path: null, author, labels: labels.length ? labels.join(',') : null, state: issue.state },
  };
}

/**
 * A file's bytes as text: UTF-8 (a byte order mark dropped). Undefined for content that is not text (a NUL byte, or
 * bytes that are not valid UTF-8).
 */
export function decodeText(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    return undefined;
  }
}
