import { emailPrincipal, MAX_PRINCIPALS, PUBLIC } from '@crs/domain/acl';
import type { ResourcePermission } from '../../provider.port';
import type { GitHubClient } from './github-client';
import { githubError, isStatus } from './github-errors';
import type { GitHubRepository, RepositoryName } from './github-mapping';
import { DEFAULT_MAX_PAGES, guardedPages } from './github-pages';
import { ScopeError } from '../../provider-errors';

/** What a repository's permission capture found, and the verdict it gives (docs/providers/github.md). */
export interface PermissionReport {
  visibility: 'public' | 'private' | 'internal';
  /** collaborators listed (for a private repository); `MAX_PRINCIPALS + 1` stands for "more than the limit" */
  collaborators: number;
  /** collaborators whose profile shows no public email (or one that is not an email address); none for internal */
  unresolved: string[];
  verdict: ResourcePermission;
}

/** Concurrent `/users/{login}` look-ups while resolving a private repository's collaborators. */
const LOOKUP_CONCURRENCY = 4;

/**
 * The group principal that stands for everyone who may read a repository with more collaborators than an ACL may
 * list: `group:github:<owner>/<name>` on github.com, `group:github:<host>/<owner>/<name>` on an Enterprise Server.
 */
export function repositoryGroup(repository: RepositoryName, host: string): string {
  return `group:github:${host === 'github.com' ? '' : `${host}/`}${repository.fullName}`.toLowerCase();
}

/**
 * Rule 11 for a repository, from its record (read by the caller) and, for a private one, its collaborators. Public: `__public__`. Private: its collaborators (every affiliation: direct, through an
 * organization team, organization owners) as `user_email:` principals when each one shows a public email; when any
 * does not, the capture says nothing (`acl: null`) so the resource's access rule governs, and the report names how
 * many were unresolved; more than MAX_PRINCIPALS collaborators: the repository's group principal. Internal
 * (Enterprise: readable by every member of the enterprise, who are not collaborators and whom no call lists):
 * restricted, with readers it cannot name (`acl: null, unresolved: 1`), so the resource's access rule governs and,
 * with none, the repository is closed; never public, which it is not.
 */
export async function inspectPermissions(
  client: GitHubClient,
  repository: RepositoryName,
  record: Pick<GitHubRepository, 'visibility' | 'private'>,
  host: string,
  opts: { signal?: AbortSignal; maxPages?: number } = {},
): Promise<PermissionReport> {
  const { signal } = opts;
  const visibility: PermissionReport['visibility'] = record.visibility === 'internal' ? 'internal' : record.private ? 'private' : 'public';
  if (visibility === 'public') return { visibility, collaborators: 0, unresolved: [], verdict: { status: 'captured', acl: [PUBLIC] } };
  if (visibility === 'internal') return { visibility, collaborators: 0, unresolved: [], verdict: { status: 'captured', acl: null, unresolved: 1 } };

  const logins: string[] = [];
  try {
    const pages = client.paginate.iterator(client.repos.listCollaborators, { owner: repository.owner, repo: repository.repo, affiliation: 'all', per_page: 100 });
    for await (const page of guardedPages(pages, `the collaborators of ${repository.fullName}`, host, opts.maxPages ?? DEFAULT_MAX_PAGES)) {
      signal?.throwIfAborted();
      logins.push(...page.data.map((c) => c.login));
      if (logins.length > MAX_PRINCIPALS) break;
    }
  } catch (err) {
    if (isStatus(err, 403)) {
      throw new ScopeError(`${host} does not show the collaborators of ${repository.fullName} to this token: listing them needs push access to the repository. Use a token with push access, or turn permission capture off and set the resource's acl.`, { cause: err });
    }
    throw githubError(err, `the collaborators of ${repository.fullName}`, host);
  }
  if (logins.length > MAX_PRINCIPALS) {
    return { visibility, collaborators: logins.length, unresolved: [], verdict: { status: 'captured', acl: [repositoryGroup(repository, host)] } };
  }

  const emails = new Map<string, string | null>();
  let next = 0;
  const lookUp = async () => {
    for (let i = next++; i < logins.length; i = next++) {
      signal?.throwIfAborted();
      const login = logins[i];
      try {
        const { data } = await client.users.getByUsername({ username: login });
        emails.set(login, emailPrincipal(data.email));
      } catch (err) {
        throw githubError(err, `the profile of ${login}`, host);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, logins.length) }, lookUp));
  const unresolved = logins.filter((l) => emails.get(l) === null);
  if (unresolved.length) return { visibility, collaborators: logins.length, unresolved, verdict: { status: 'captured', acl: null, unresolved: unresolved.length } };
  const acl = [...new Set(logins.map((l) => emails.get(l)!))].sort();
  // A private repository always has an owner or an admin; an empty list would still name nobody, never everybody.
  return { visibility, collaborators: logins.length, unresolved, verdict: { status: 'captured', acl } };
}

