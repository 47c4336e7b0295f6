import http from 'node:http';
import https from 'node:https';
import { PrivateTargetError, publicOnlyLookup } from '@crs/network/public-targets';
import { AuthError, ConfigurationError, RateLimitedError, ScopeError, TargetForbiddenError, TransientError } from '../../provider-errors';

/**
 * The HTTP transport under confluence.js (given to it as the axios `adapter` of `baseRequestConfig`).
 *
 * confluence.js rethrows a failed response as its body alone: the status survives only when the body carries it and
 * the headers are lost, so a 429's Retry-After could not be read, and a network error becomes a TypeError. This
 * transport sends each request itself and turns every failure into an error the provider can act on before
 * confluence.js sees it (confluence.js rethrows anything that is not an axios error as it is):
 * - 429: a RateLimitedError at Retry-After (seconds or an HTTP date; 60 s when absent). Never slept on.
 * - 5xx and network errors: retried after each of `retryDelaysMs`, then a TransientError.
 * - 401: AuthError; 403: ScopeError; 3xx: ConfigurationError (redirects are not followed, so a redirect cannot lead
 *   to an address that was not checked); other 4xx: ConfluenceHttpError for the caller to place (a missing space, a
 *   deleted page).
 * - A connection to a private address when only public ones are allowed: TargetForbiddenError. Names are checked by
 *   the agents' `lookup` at connect time.
 */

/** A 4xx other than 401, 403 and 429: what it means depends on what was asked. */
export class ConfluenceHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ConfluenceHttpError';
  }
}

export interface TransportSettings {
  site: string;
  /** checks every connection's addresses at connect time */
  publicOnly: boolean;
  retryDelaysMs: readonly number[];
  requestTimeoutMs: number;
  now: () => Date;
  signal?: AbortSignal;
}

/** The part of axios' request config this transport reads. */
interface RequestConfig {
  baseURL?: string;
  url?: string;
  method?: string;
  params?: Record<string, unknown>;
  paramsSerializer?: ((params: Record<string, unknown>) => string) | { serialize?: (params: Record<string, unknown>) => string };
  headers?: Record<string, unknown> & { toJSON?: () => Record<string, unknown> };
  data?: unknown;
}

interface RawResponse {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One transport per provider call: its keep-alive agents are closed with `close`. */
export class ConfluenceTransport {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  /** Requests answered, for the provider's own accounting in tests and logs. */
  requests = 0;

  constructor(private readonly settings: TransportSettings) {
    const lookup = settings.publicOnly ? { lookup: publicOnlyLookup() } : {};
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: 4, ...lookup });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 4, ...lookup });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** The axios adapter: resolves with an axios-shaped response for 2xx, throws a provider error otherwise. */
  readonly adapter = async (config: RequestConfig) => {
    const url = requestUrl(config);
    const method = (config.method ?? 'get').toUpperCase();
    const headers = plainHeaders(config.headers);
    const body = config.data === undefined || config.data === null ? undefined : typeof config.data === 'string' ? config.data : JSON.stringify(config.data);
    for (let attempt = 0; ; attempt++) {
      this.settings.signal?.throwIfAborted();
      let res: RawResponse;
      try {
        res = await this.send(url, method, headers, body);
      } catch (err) {
        if (this.settings.signal?.aborted) throw this.settings.signal.reason;
        if (err instanceof PrivateTargetError || (err as { cause?: unknown })?.cause instanceof PrivateTargetError) {
          throw new TargetForbiddenError(`Confluence at ${this.settings.site} resolves to an address that is not on the public internet (${(err as Error).message}); connectors may not connect to this service's own network.`, { cause: err });
        }
        if (attempt < this.settings.retryDelaysMs.length) {
          await this.pause(this.settings.retryDelaysMs[attempt]);
          continue;
        }
        throw new TransientError(`Confluence at ${this.settings.site} could not be reached (${(err as Error).message}). The sync is tried again later.`, { cause: err });
      }
      this.requests++;
      if (res.status >= 200 && res.status < 300) {
        return { data: parseBody(res), status: res.status, statusText: res.statusText, headers: res.headers, config, request: {} };
      }
      if (res.status >= 500 && attempt < this.settings.retryDelaysMs.length) {
        await this.pause(this.settings.retryDelaysMs[attempt]);
        continue;
      }
      throw this.failure(res, method, url);
    }
  };

  private failure(res: RawResponse, method: string, url: URL): Error {
    const detail = messageOf(res);
    const what = `${method} ${url.pathname}`;
    const site = this.settings.site;
    if (res.status === 429) {
      const retryAt = retryAtOf(res.headers, this.settings.now());
      return new RateLimitedError(`Confluence at ${site} is rate limiting the connector until ${retryAt.toISOString()}.`, retryAt);
    }
    if (res.status === 401) {
      return new AuthError(`Confluence at ${site} refused the email and API token (401${detail ? `: ${detail}` : ''}). Create a new API token for that account and update the connector's credentials.`);
    }
    if (res.status === 403) {
      return new ScopeError(`The Confluence account may not do ${what} at ${site} (403${detail ? `: ${detail}` : ''}). Give the account the permission to view it.`);
    }
    if (res.status >= 300 && res.status < 400) {
      return new ConfigurationError(`Confluence at ${site} redirected ${what} to ${String(res.headers.location ?? 'another address')}; set base_url to the wiki's final address.`);
    }
    if (res.status >= 500) return new TransientError(`Confluence at ${site} failed ${what} with ${res.status}${detail ? ` (${detail})` : ''}. The sync is tried again later.`);
    return new ConfluenceHttpError(res.status, `Confluence at ${site} answered ${what} with ${res.status}${detail ? `: ${detail}` : ''}`);
  }

  private send(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Promise<RawResponse> {
    const secure = url.protocol === 'https:';
    const request = secure ? https.request : http.request;
    return new Promise<RawResponse>((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          headers: { accept: 'application/json', ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          agent: secure ? this.httpsAgent : this.httpAgent,
          timeout: this.settings.requestTimeoutMs,
          ...(this.settings.signal ? { signal: this.settings.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${this.settings.requestTimeoutMs} ms`), { code: 'ETIMEDOUT' })));
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  private pause(ms: number): Promise<void> {
    const signal = this.settings.signal;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function requestUrl(config: RequestConfig): URL {
  const base = (config.baseURL ?? '').replace(/\/+$/, '');
  const path = (config.url ?? '').replace(/^\/+/, '');
  const url = new URL(/^https?:\/\//i.test(config.url ?? '') ? config.url! : `${base}/${path}`);
  const params = config.params ?? {};
  const serializer = typeof config.paramsSerializer === 'function' ? config.paramsSerializer : config.paramsSerializer?.serialize;
  const query = serializer ? serializer(params) : new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null).map(([k, v]): [string, string] => [k, String(v)])).toString();
  if (query) url.search = url.search ? `${url.search}&${query}` : `?${query}`;
  return url;
}

function plainHeaders(headers: RequestConfig['headers']): Record<string, string> {
  const plain = typeof headers?.toJSON === 'function' ? headers.toJSON() : (headers ?? {});
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(plain)) if (v !== undefined && v !== null && typeof v !== 'object' && typeof v !== 'function') out[k] = String(v);
  return out;
}

function parseBody(res: RawResponse): unknown {
  if (res.body === '') return undefined;
  if (/json/i.test(String(res.headers['content-type'] ?? ''))) return JSON.parse(res.body);
  return res.body;
}

/** A person-readable reason from an error body (Confluence's `{statusCode, message}`), without echoing long pages. */
function messageOf(res: RawResponse): string {
  try {
    const body = JSON.parse(res.body) as { message?: unknown };
    if (typeof body.message === 'string') return body.message.slice(0, 300);
  } catch {
    // not JSON: a proxy's page or plain text
  }
  return res.body.replace(/\s+/g, ' ').trim().slice(0, 120);
}

/** When a 429 may be retried: Retry-After in seconds or as an HTTP date, else 60 s from now. */
export function retryAtOf(headers: http.IncomingHttpHeaders, now: Date): Date {
  const value = String(headers['retry-after'] ?? '').trim();
  if (/^\d+$/.test(value)) return new Date(now.getTime() + Number(value) * 1000);
  const date = Date.parse(value);
  if (value && Number.isFinite(date)) return new Date(Math.max(date, now.getTime()));
  return new Date(now.getTime() + 60_000);
}
