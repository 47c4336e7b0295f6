import { HttpException } from 'jira.js';
import {
  AuthError,
  ConfigurationError,
  ProviderError,
  RateLimitedError,
  ResourceGoneError,
  ScopeError,
  TargetForbiddenError,
  TransientError,
} from '../../provider-errors';
import { retryAtFrom } from '../../retry-after';

/** What a failed call was doing, for the message: "reading the issues of project OPS". */
export interface CallContext {
  site: string;
  what: string;
  /** a 404 here means the resource is gone (the project was deleted), not a setting to fix */
  goneWhenMissing?: boolean;
}

interface HttpFacts {
  status: number;
  headers: Record<string, unknown>;
  messages: string[];
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'ERR_SOCKET_CONNECTION_TIMEOUT']);

/** The status, headers and error messages of an HTTP answer, when the failure was one (jira.js wraps it in HttpException). */
function httpFacts(err: unknown): HttpFacts | undefined {
  if (!(err instanceof HttpException)) return undefined;
  const response = (err.cause as { response?: { status?: number; headers?: Record<string, unknown>; data?: unknown } } | undefined)?.response;
  if (response?.status === undefined) return undefined;
  const data = response.data as { errorMessages?: unknown; errors?: unknown; message?: unknown } | undefined;
  const messages: string[] = [];
  if (Array.isArray(data?.errorMessages)) messages.push(...data.errorMessages.filter((m): m is string => typeof m === 'string'));
  if (data?.errors && typeof data.errors === 'object') messages.push(...Object.values(data.errors as Record<string, unknown>).filter((m): m is string => typeof m === 'string'));
  if (typeof data?.message === 'string') messages.push(data.message);
  return { status: response.status, headers: response.headers ?? {}, messages };
}

/** The error code of a failure that never got an answer (network, timeout, a refused address), if any. */
function networkCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  for (const code of [e?.code, e?.cause?.code]) if (typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR') return code;
  return undefined;
}

/**
 * When a throttled caller may call again. Jira Cloud sends `Retry-After` (seconds) and, on 429s, `X-RateLimit-Reset`
 * (an ISO 8601 time); the reset time is taken when it is in the future, else Retry-After as `retryAtFrom` reads it
 * (seconds, or an HTTP date; one already past is now), else a minute.
 */
export function retryAtOf(headers: Record<string, unknown>, now: Date): Date {
  const header = (name: string) => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return typeof value === 'string' ? value.trim() : Array.isArray(value) && typeof value[0] === 'string' ? value[0].trim() : undefined;
  };
  const reset = Date.parse(header('x-ratelimit-reset') ?? '');
  if (Number.isFinite(reset) && reset > now.getTime()) return new Date(reset);
  return retryAtFrom(header('retry-after'), now);
}

/** Whether a failure may pass on its own and the same call be sent again at once: a 5xx or a dropped connection. */
export function isRetryable(err: unknown): boolean {
  const http = httpFacts(err);
  if (http) return http.status >= 500 && http.status !== 501;
  const code = networkCode(err);
  return code !== undefined && NETWORK_CODES.has(code) && code !== 'ENOTFOUND';
}

/**
 * Maps what jira.js throws to the provider errors: 401 is the credentials, 403 a missing permission, 404 a project
 * that is gone (or a setting), 429 a rate limit with the time to come back, 5xx and network failures transient, a
 * connection refused by the private-network policy a forbidden target, an answer over the byte limit a configuration
 * error.
 */
export function toProviderError(err: unknown, call: CallContext, now: Date): ProviderError {
  if (err instanceof ProviderError) return err;
  const http = httpFacts(err);
  const where = `${call.what} on ${call.site}`;
  if (http) {
    const detail = http.messages.length ? ` (${http.messages.join(' ')})` : '';
    if (http.status === 401) {
      return new AuthError(`Jira refused the connector's credentials while ${where}${detail}. The API token may have been revoked or the email changed: update the connector's email and api_token.`, { cause: err });
    }
    if (http.status === 403) {
      return new ScopeError(`The Jira account may not do this: ${where} was refused${detail}. Give the account the permission this needs (Browse projects to read issues; Administer Jira or Administer projects to read permission schemes, project roles and issue security levels).`, { cause: err });
    }
    if (http.status === 429) {
      const retryAt = retryAtOf(http.headers, now);
      return new RateLimitedError(`Jira's rate limit was reached while ${where}; syncing resumes after ${retryAt.toISOString()}.`, retryAt, { cause: err });
    }
    if (http.status === 404 || (http.status === 400 && /does not exist for the field 'project'/i.test(http.messages.join(' ')))) {
      if (call.goneWhenMissing) return new ResourceGoneError(`The Jira project is gone or no longer visible to the account: ${where} answered ${http.status}${detail}.`, { cause: err });
      return new ConfigurationError(`Jira answered ${http.status} while ${where}${detail}. Check that base_url is the site's address.`, { cause: err });
    }
    if (http.status >= 500) return new TransientError(`Jira answered ${http.status} while ${where}${detail}; the sync is tried again later.`, { cause: err });
    if (http.status >= 300 && http.status < 400) {
      const location = typeof http.headers.location === 'string' ? ` to ${http.headers.location}` : '';
      return new ConfigurationError(`Jira redirected${location} while ${where}; set base_url to the address the site answers on.`, { cause: err });
    }
    return new ConfigurationError(`Jira refused the request while ${where}: ${http.status}${detail}.`, { cause: err });
  }
  const code = networkCode(err);
  const tooLarge = /^maxContentLength size of (\d+) exceeded/.exec(err instanceof Error ? err.message : '');
  if (tooLarge) return new ConfigurationError(`Jira's answer was larger than ${tooLarge[1]} bytes, the most the connector reads of one answer, while ${where}; it was refused. A smaller page_size makes the answers of an issue search smaller.`, { cause: err });
  if (code === 'PRIVATE_TARGET') return new TargetForbiddenError(`The base_url leads to an address that is not on the public internet while ${where}; connectors may not connect to this service's own network.`, { cause: err });
  if (code === 'ERR_CANCELED') return new TransientError(`The call was cancelled while ${where}.`, { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new TransientError(`Jira could not be reached while ${where} (${code ?? message}); the sync is tried again later.`, { cause: err });
}

/**
 * Runs one API call: a short burst of 5xx or dropped connections is retried after each of `delaysMs`, then the
 * failure becomes a ProviderError. A 429 is never waited on here: it becomes a RateLimitedError at once, so the sync
 * is deferred and its lease released.
 */
export async function callJira<T>(call: CallContext, run: () => Promise<T>, options: { delaysMs: readonly number[]; signal?: AbortSignal; clock: () => Date }): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      return await run();
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (attempt < options.delaysMs.length && isRetryable(err)) {
        await new Promise((resolve) => setTimeout(resolve, options.delaysMs[attempt]));
        continue;
      }
      throw toProviderError(err, call, options.clock());
    }
  }
}
