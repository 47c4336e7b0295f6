import type { Version3Client } from 'jira.js';
import { callJira } from './jira-errors';
import { PageGuard } from './jira-pages';
import type { JiraSite } from './jira-site';

/** One provider call's way to Jira: the client, and every API call through the retry budget and the error mapping. */
export class JiraApi {
  constructor(
    readonly client: Version3Client,
    readonly site: JiraSite,
    private readonly options: { delaysMs: readonly number[]; signal?: AbortSignal; clock: () => Date; maxPages: number },
  ) {}

  /** Runs one API call; `what` says in a failure's message what it was doing ("reading the issues of project OPS"). */
  call<T>(what: string, run: (client: Version3Client) => Promise<T>, goneWhenMissing = false): Promise<T> {
    return callJira({ site: this.site.baseUrl, what, goneWhenMissing }, () => run(this.client), { delaysMs: this.options.delaysMs, signal: this.options.signal, clock: this.options.clock });
  }

  /** The end guard of one paged listing, named as in messages ("the issues of project OPS"). */
  pages(what: string): PageGuard {
    return new PageGuard(what, this.site.baseUrl, this.options.maxPages);
  }

  checkAborted(): void {
    this.options.signal?.throwIfAborted();
  }
}
