import { ConfigurationError, TransientError } from '../../provider-errors';

/** Pages one listing may take by default: 10,000 requests of up to 250 entries. */
export const DEFAULT_MAX_PAGES = 10_000;

/**
 * The end guard of one paged listing (a `_links.next` cursor, or `start` and `limit`): called with the position of
 * each next page before it is asked for. A position already read (a next link that does not move on, a listing that
 * would never end) is a TransientError; a listing past `maxPages` pages is a ConfigurationError. Both say which
 * listing stopped, so a listing never ends early without saying so: a short listing would make pruning delete pages.
 */
export class PageGuard {
  private readonly read = new Set<string>();
  private pages = 1;

  constructor(
    private readonly what: string,
    private readonly site: string,
    private readonly maxPages: number,
    first: string,
  ) {
    this.read.add(first);
  }

  advance(next: string): void {
    if (this.read.has(next)) throw this.stalled();
    if (this.pages >= this.maxPages) {
      throw new ConfigurationError(`${this.what.charAt(0).toUpperCase()}${this.what.slice(1)} ran past ${this.maxPages} pages at ${this.site}, the most the connector reads of one listing; the listing was stopped there.`);
    }
    this.read.add(next);
    this.pages++;
  }

  /** The error of a page that does not move the listing on (its next link, or a full page with nothing new). */
  stalled(): TransientError {
    return new TransientError(`Confluence at ${this.site} gave a page already read as the next page of ${this.what}; the listing was stopped there. The sync is tried again later.`);
  }
}
