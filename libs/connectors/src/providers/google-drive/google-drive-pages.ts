import { ConfigurationError, TransientError } from '../../provider-errors';

/** Pages one listing may take by default: 10,000 pages (of up to 1,000 files, or 100 grants). */
export const DEFAULT_MAX_PAGES = 10_000;

/**
 * The end guard of one paged Drive listing (files.list, changes.list, permissions.list, drives.list): a
 * `nextPageToken` already requested in it (a listing that would never end) is a TransientError, and a listing that
 * goes on past `maxPages` pages a ConfigurationError; both say which listing stopped. A listing that walks several
 * queries (a folder tree, a batch of folders a query) names the query each token belongs to, since Drive's tokens are
 * only unique within one.
 */
export class PageGuard {
  private readonly requested = new Set<string>();
  private pages = 0;

  constructor(
    private readonly what: string,
    private readonly maxPages: number,
  ) {}

  /** One page was read with `token` (none for a first page) of `query`: the token of the next page, or undefined at the end. */
  next(token: string | null | undefined, next: string | null | undefined, query = ''): string | undefined {
    this.pages++;
    if (token) this.requested.add(`${query}\n${token}`);
    if (!next) return undefined;
    if (this.requested.has(`${query}\n${next}`)) throw new TransientError(`Google Drive gave a page already read as the next page of ${this.what}; the listing was stopped there.`);
    if (this.pages >= this.maxPages) throw new ConfigurationError(`${this.what.charAt(0).toUpperCase()}${this.what.slice(1)} ran past ${this.maxPages} pages, the most the connector reads of one listing; the listing was stopped there.`);
    return next;
  }
}
