/** What a fake answers instead of the route's response. Each fake renders it in its provider's error shape. */
export type Interruption =
  | { kind: 'rate-limited'; retryAfterSeconds: number }
  | { kind: 'server-error'; status: number }
  | { kind: 'unauthorized'; reason: 'missing' | 'invalid' | 'revoked' };

/**
 * The switches a test flips on a fake to make it behave as the real service does under stress: a page-size cap,
 * throttling with Retry-After, a burst of server errors, a token revoked mid-sync, and changes to the source made
 * after a given number of answered requests (edits, deletions and permission changes during a crawl).
 * Every answered request is logged, so a test can count the API calls a sync made.
 */
export class ScenarioSwitches {
  /** Upper bound on any page, whatever the client asked for; undefined leaves each endpoint's own limit. */
  maxPageSize: number | undefined;
  /** `METHOD /path?query` of every request answered, in order, interruptions included. */
  readonly requests: string[] = [];
  private readonly queued: Interruption[] = [];
  private readonly revoked = new Set<string>();
  private readonly scheduled: { atCount: number; change: () => void }[] = [];

  constructor(private readonly validTokens: ReadonlySet<string>) {}

  /** The next `times` requests are throttled with this Retry-After. */
  rateLimitNext(times: number, retryAfterSeconds: number): void {
    for (let i = 0; i < times; i++) this.queued.push({ kind: 'rate-limited', retryAfterSeconds });
  }

  /** The next `times` requests fail with this 5xx status. */
  failNext(times: number, status = 503): void {
    for (let i = 0; i < times; i++) this.queued.push({ kind: 'server-error', status });
  }

  /** From now on this token is refused as revoked. */
  revokeToken(token: string): void {
    this.revoked.add(token);
  }

  /** Accepts a revoked token again, as after the provider's administrator reinstated it. */
  restoreToken(token: string): void {
    this.revoked.delete(token);
  }

  /** Runs `change` on the source once `count` more requests have been answered, e.g. an edit in the middle of a crawl. */
  afterRequests(count: number, change: () => void): void {
    this.scheduled.push({ atCount: this.requests.length + count, change });
  }

  /** Page size for one request: what the client asked for (or the endpoint's default), capped by the switch. */
  pageSize(requested: number | undefined, endpointDefault: number, endpointMax: number): number {
    const asked = requested !== undefined && Number.isFinite(requested) && requested > 0 ? requested : endpointDefault;
    return Math.min(asked, endpointMax, this.maxPageSize ?? Number.POSITIVE_INFINITY);
  }

  /** Decides, before the route runs, whether this request is refused or interrupted instead of answered. */
  intercept(token: string | undefined): Interruption | undefined {
    if (token === undefined) return { kind: 'unauthorized', reason: 'missing' };
    if (this.revoked.has(token)) return { kind: 'unauthorized', reason: 'revoked' };
    if (!this.validTokens.has(token)) return { kind: 'unauthorized', reason: 'invalid' };
    return this.queued.shift();
  }

  /** Records an answered request and applies the source changes that were due after it. */
  answered(method: string, url: string): void {
    this.requests.push(`${method} ${url}`);
    const due = this.scheduled.filter((s) => s.atCount <= this.requests.length);
    for (const s of due) {
      this.scheduled.splice(this.scheduled.indexOf(s), 1);
      s.change();
    }
  }
}
