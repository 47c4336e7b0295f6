import { ConfigurationError, TransientError } from '../../provider-errors';

/** Pages one listing may take by default: 10,000 pages of up to 100 entries. */
export const DEFAULT_MAX_PAGES = 10_000;

/** The URL a Link header gives as `rel="next"`, if any. */
export function nextLink(link: unknown): string | undefined {
  return /<([^<>]+)>\s*;\s*rel="next"/.exec(String(link ?? ''))?.[1];
}

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const repeated = (what: string, host: string) => new TransientError(`${host} gave a page already read as the next page of ${what}; the listing was stopped there.`);
const tooLong = (what: string, maxPages: number) => new ConfigurationError(`${capitalized(what)} run past ${maxPages} pages, the most the connector reads of one listing; the listing was stopped there.`);

/**
 * Whether a listing read by page number (`page` = 1, 2, …) goes on after `page`, from the page's Link header. A next
 * link that names this page or an earlier one (a listing that would never end) is a TransientError; a listing past
 * `maxPages` pages a ConfigurationError. Both say which listing stopped.
 */
export function hasNextPage(link: unknown, page: number, what: string, host: string, maxPages: number): boolean {
  const next = nextLink(link);
  if (next === undefined) return false;
  let nextPage: number | undefined;
  try {
    const value = new URL(next).searchParams.get('page');
    nextPage = value === null ? undefined : Number(value);
  } catch {
    nextPage = undefined;
  }
  if (nextPage !== undefined && !(nextPage > page)) throw repeated(what, host);
  if (page >= maxPages) throw tooLong(what, maxPages);
  return true;
}

/**
 * The pages of an Octokit `paginate.iterator`, stopped with an error when a page's next link is the link just
 * followed (a listing that would never end: TransientError), or when the listing runs past `maxPages` pages
 * (ConfigurationError). The check runs when the next page is asked for, so a reader that stops early never meets it.
 */
export async function* guardedPages<P extends { headers: { link?: string } }>(pages: AsyncIterable<P>, what: string, host: string, maxPages: number): AsyncGenerator<P> {
  let followed: string | undefined;
  let count = 0;
  for await (const page of pages) {
    count++;
    yield page;
    const next = nextLink(page.headers.link);
    if (next === undefined) return;
    if (next === followed) throw repeated(what, host);
    if (count >= maxPages) throw tooLong(what, maxPages);
    followed = next;
  }
}
