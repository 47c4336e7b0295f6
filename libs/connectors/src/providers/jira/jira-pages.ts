import { ConfigurationError, TransientError } from '../../provider-errors';

/** Pages one listing may take by default: 10,000 pages of up to 100 entries (5,000 for the id listing). */
export const DEFAULT_MAX_PAGES = 10_000;

/**
 * The end guard of one paged listing (`what`: "the issues of project OPS"). Before each page after the first the
 * listing says where it goes on (a `nextPageToken`, a `startAt`, the key after which a keyset page starts, a query):
 * a place already read means Jira does not move on, and the listing would never end, which is a TransientError; more
 * than `maxPages` pages is a ConfigurationError. Both say which listing stopped and where.
 */
export class PageGuard {
  private pages = 1;
  private readonly visited = new Set<string>();

  constructor(
    private readonly what: string,
    private readonly site: string,
    private readonly maxPages: number,
  ) {}

  /** Called before reading the next page, at `place`. */
  next(place: string | number): void {
    const key = String(place);
    if (this.visited.has(key)) throw new TransientError(`Jira on ${this.site} answered with a page already read as the next page of ${this.what}; the listing was stopped there and is tried again later.`);
    if (this.pages >= this.maxPages) throw new ConfigurationError(`Reading ${this.what} on ${this.site} ran past ${this.maxPages} pages, the most the connector reads of one listing; the listing was stopped there.`);
    this.visited.add(key);
    this.pages++;
  }
}
