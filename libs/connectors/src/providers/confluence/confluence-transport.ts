import http from 'node:http';
import https from 'node:https';
import axios, { AxiosHeaders, type AxiosResponse, type InternalAxiosRequestConfig } from 'axios';
import type { LookupFn } from '@crs/network/address-policy';
import { publicOnlyAgents } from '@crs/network/public-agents';
import { PrivateTargetError } from '@crs/network/public-targets';
import { AuthError, ConfigurationError, RateLimitedError, ScopeError, TargetForbiddenError, TransientError } from '../../provider-errors';
import { retryAtFrom } from '../../retry-after';

/**
 * The axios adapter under confluence.js (its `baseRequestConfig.adapter`).
 *
 * Every request is sent by axios' own http adapter with settings no caller can loosen: the agents (for a wiki on the
 * public internet, `publicOnlyAgents`, which check every connection's address as it connects, a name as it resolves),
 * no proxy from the environment, no redirect followed (`maxRedirects: 0`), a deadline (`timeout`) and a byte limit on
 * the answer (`maxContentLength`).
 *
 * confluence.js rethrows a failed response as its body alone: the status survives only when the body carries it and
 * the headers are lost, so a 429's Retry-After could not be read, and a network error becomes a TypeError. This
 * adapter sees every answer first and turns every failure into an error the provider can act on before confluence.js
 * sees it (confluence.js rethrows anything that is not an axios error as it is):
 * - 429: a RateLimitedError at Retry-After (`retryAtFrom`: seconds or an HTTP date; 60 s when absent). Never slept on.
 * - 5xx, network errors and no answer within the deadline: retried after each of `retryDelaysMs`, then a TransientError.
 * - 401: AuthError; 403: ScopeError; 3xx: ConfigurationError (a redirect is not followed, so it cannot lead to an
 *   address that was not checked, nor carry the token elsewhere); other 4xx: ConfluenceHttpError for the caller to
 *   place (a missing space, a deleted page).
 * - An answer larger than `maxResponseBytes`: ConfigurationError (reading it again would not make it smaller).
 * - A connection to a private address when only public ones are allowed: TargetForbiddenError.
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
  /** connect through `publicOnlyAgents`, which check every connection's addresses at connect time */
  publicOnly: boolean;
  /** how the public-only agents resolve names (tests replace it) */
  lookup?: LookupFn;
  retryDelaysMs: readonly number[];
  requestTimeoutMs: number;
  /** the most bytes of one answer that are read */
  maxResponseBytes: number;
  now: () => Date;
  signal?: AbortSignal;
}

const httpAdapter = axios.getAdapter('http');

/** One transport per provider call: its keep-alive agents are closed with `close`. */
export class ConfluenceTransport {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  /** Requests answered, for the provider's own accounting in tests and logs. */
  requests = 0;

  constructor(private readonly settings: TransportSettings) {
    const agents = settings.publicOnly
      ? publicOnlyAgents({ maxSockets: 4, ...(settings.lookup ? { lookup: settings.lookup } : {}) })
      : { httpAgent: new http.Agent({ keepAlive: true, maxSockets: 4 }), httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 4 }) };
    this.httpAgent = agents.httpAgent;
    this.httpsAgent = agents.httpsAgent;
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** The axios adapter: resolves with axios' response for 2xx, throws a provider error otherwise. */
  readonly adapter = async (config: InternalAxiosRequestConfig): Promise<AxiosResponse> => {
    const { signal } = this.settings;
    const sent: InternalAxiosRequestConfig = {
      ...config,
      httpAgent: this.httpAgent,
      httpsAgent: this.httpsAgent,
      proxy: false,
      maxRedirects: 0,
      timeout: this.settings.requestTimeoutMs,
      maxContentLength: this.settings.maxResponseBytes,
      // every status is answered here, with its headers
      validateStatus: () => true,
      ...(signal ? { signal } : {}),
    };
    const what = `${(config.method ?? 'get').toUpperCase()} ${pathOf(config)}`;
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      let res: AxiosResponse;
      try {
        res = await httpAdapter(sent);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        const refusal = privateTargetIn(err);
        if (refusal) {
          throw new TargetForbiddenError(`Confluence at ${this.settings.site} resolves to an address that is not on the public internet (${refusal.message}); connectors may not connect to this service's own network.`, { cause: err });
        }
        if (axios.isAxiosError(err) && err.code === 'ERR_BAD_RESPONSE' && /maxContentLength/.test(err.message)) {
          throw new ConfigurationError(`Confluence at ${this.settings.site} answered ${what} with more than ${this.settings.maxResponseBytes} bytes, more than the connector reads of one answer; lower the resource's page_size.`);
        }
        if (attempt < this.settings.retryDelaysMs.length) {
          await this.pause(this.settings.retryDelaysMs[attempt]);
          continue;
        }
        throw new TransientError(`Confluence at ${this.settings.site} could not be reached (${(err as Error).message}). The sync is tried again later.`, { cause: err });
      }
      this.requests++;
      if (res.status >= 200 && res.status < 300) return res;
      if (res.status >= 500 && attempt < this.settings.retryDelaysMs.length) {
        await this.pause(this.settings.retryDelaysMs[attempt]);
        continue;
      }
      throw this.failure(res, what);
    }
  };

  private failure(res: AxiosResponse, what: string): Error {
    const detail = messageOf(res.data);
    const site = this.settings.site;
    const headers = AxiosHeaders.from(res.headers as Record<string, string>);
    if (res.status === 429) {
      const retryAt = retryAtFrom(headerValue(headers.get('retry-after')), this.settings.now());
      return new RateLimitedError(`Confluence at ${site} is rate limiting the connector until ${retryAt.toISOString()}.`, retryAt);
    }
    if (res.status === 401) {
      return new AuthError(`Confluence at ${site} refused the email and API token (401${detail ? `: ${detail}` : ''}). Create a new API token for that account and update the connector's credentials.`);
    }
    if (res.status === 403) {
      return new ScopeError(`The Confluence account may not do ${what} at ${site} (403${detail ? `: ${detail}` : ''}). Give the account the permission to view it.`);
    }
    if (res.status >= 300 && res.status < 400) {
      return new ConfigurationError(`Confluence at ${site} redirected ${what} to ${(headerValue(headers.get('location')) ?? 'another address').slice(0, 300)}; redirects are not followed, set base_url to the wiki's final address.`);
    }
    if (res.status >= 500) return new TransientError(`Confluence at ${site} failed ${what} with ${res.status}${detail ? ` (${detail})` : ''}. The sync is tried again later.`);
    return new ConfluenceHttpError(res.status, `Confluence at ${site} answered ${what} with ${res.status}${detail ? `: ${detail}` : ''}`);
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

/** The request's path for messages, without its query (which may carry a CQL query, never a secret, but is long). */
function pathOf(config: InternalAxiosRequestConfig): string {
  try {
    return new URL(axios.getUri(config)).pathname;
  } catch {
    return config.url ?? '';
  }
}

/** The PrivateTargetError a failed connection carries somewhere in its cause chain, if it was refused as private. */
function privateTargetIn(err: unknown): PrivateTargetError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof PrivateTargetError) return e;
  }
  return undefined;
}

function headerValue(value: unknown): string | undefined {
  return typeof value === 'string' ? value : Array.isArray(value) ? String(value[0]) : undefined;
}

/** A person-readable reason from an error body (Confluence's `{statusCode, message}`), without echoing long pages. */
function messageOf(body: unknown): string {
  const text = typeof body === 'string' ? body : body === undefined || body === null ? '' : JSON.stringify(body);
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message.slice(0, 300);
  } catch {
    // not JSON: a proxy's page or plain text
  }
  return text.replace(/\s+/g, ' ').trim().slice(0, 120);
}
