import { RequestError } from '@octokit/request-error';
import { AuthError, ConfigurationError, isProviderError, ProviderError, RateLimitedError, ResourceGoneError, ScopeError, TargetForbiddenError, TransientError } from '../../provider-errors';
import { retryAtFrom } from '../../retry-after';
import { GitHubFetchError } from './github-fetch';

/** Waits GitHub asks for when a secondary limit names none (its documentation: wait at least a minute). */
const SECONDARY_LIMIT_FALLBACK_MS = 60_000;

const header = (err: RequestError, name: string): string | undefined => {
  const value = err.response?.headers[name];
  return value === undefined || value === null ? undefined : String(value);
};

/**
 * When a throttled call may be tried again, as GitHub documents it: as `retry-after` says when that header is present
 * (seconds, or an HTTP date); else, when `x-ratelimit-remaining` is 0, at `x-ratelimit-reset` (epoch seconds); else a
 * minute from now. Undefined when the error is not a rate limit.
 */
export function rateLimitRetryAt(err: RequestError, now: Date): Date | undefined {
  const message = String(err.message);
  const limited = err.status === 429 || (err.status === 403 && (header(err, 'x-ratelimit-remaining') === '0' || /rate limit/i.test(message)));
  if (!limited) return undefined;
  const retryAfter = header(err, 'retry-after');
  if (retryAfter !== undefined) return retryAtFrom(retryAfter, now, SECONDARY_LIMIT_FALLBACK_MS);
  const reset = Number(header(err, 'x-ratelimit-reset'));
  if (header(err, 'x-ratelimit-remaining') === '0' && Number.isFinite(reset) && reset > 0) return new Date(reset * 1000);
  return new Date(now.getTime() + SECONDARY_LIMIT_FALLBACK_MS);
}

/** GitHub's message without its documentation link, for a person to read. */
function githubMessage(err: RequestError): string {
  return String(err.message).replace(/ - https?:\/\/\S+$/, '');
}

/**
 * A call the fetch ended itself (github-fetch.ts): a redirect it did not follow, an answer over the byte limit, no
 * answer by the deadline, or an address a public-only agent refused.
 */
function fetchFailure(err: GitHubFetchError, what: string, host: string): ProviderError {
  const failure = err.failure;
  switch (failure.kind) {
    case 'redirect':
      return failure.why === 'elsewhere'
        ? new ConfigurationError(`${host} redirected the request for ${what} to ${failure.location}; the connector follows redirects only within ${failure.origin}, so the token goes nowhere else. Set base_url to the address the API answers on.`, { cause: err })
        : new ConfigurationError(`${host} kept redirecting the request for ${what} (last to ${failure.location}); the connector follows at most three redirects. Set base_url to the address the API answers on.`, { cause: err });
    case 'too-large':
      return new ConfigurationError(`${host} answered with more than ${failure.limit} bytes while reading ${what}; the connector reads at most that much of one response.`, { cause: err });
    case 'deadline':
      return new TransientError(`${host} did not answer within ${failure.timeoutMs} ms while reading ${what}; it will be retried.`, { cause: err });
    case 'private-target':
      return new TargetForbiddenError(`Connecting to ${host} was refused while reading ${what}: ${failure.detail}; connectors may not connect to this service's own network.`, { cause: err });
    default: {
      const unreachable: never = failure;
      return new TransientError(`${host} failed while reading ${what}: ${JSON.stringify(unreachable)}`, { cause: err });
    }
  }
}

/**
 * A client error as the ProviderError the framework branches on. `what` names what was being read (`the
 * repository octo/docs`), so the message says what to change. The token never appears: Octokit's RequestError
 * redacts the authorization header, and only GitHub's message is used.
 */
export function githubError(err: unknown, what: string, host: string, now: () => Date = () => new Date()): ProviderError {
  if (isProviderError(err)) return err;
  if (err instanceof GitHubFetchError) return fetchFailure(err, what, host);
  if (!(err instanceof RequestError)) {
    const message = err instanceof Error ? err.message : String(err);
    return new TransientError(`${host} could not be reached while reading ${what}: ${message}`, { cause: err });
  }
  const message = githubMessage(err);
  const retryAt = rateLimitRetryAt(err, now());
  if (retryAt) return new RateLimitedError(`${host} rate-limited the token while reading ${what} (${message}); the sync resumes at ${retryAt.toISOString()}`, retryAt, { cause: err });
  switch (err.status) {
    case 401:
      return new AuthError(`${host} refused the token (${message}): it is wrong, expired or revoked. Create a new token and update the connector's credentials.`, { cause: err });
    case 403:
      return new ScopeError(
        `${host} refused to show ${what} to this token (${message}). Give the token read access to it (classic token: the repo scope for private repositories; fine-grained token: read access to Metadata, Contents, Issues and Pull requests; an organization with SAML single sign-on must authorize the token).`,
        { cause: err },
      );
    case 404:
      return new ResourceGoneError(`${host} has no ${what}, or does not show it to this token (${message}). Check the owner/name, and that the token may read it.`, { cause: err });
    case 410:
      return new ResourceGoneError(`${what} is gone at ${host} (${message}).`, { cause: err });
    case 400:
    case 409:
    case 422:
      return new ConfigurationError(`${host} cannot serve ${what} as asked (${message}).`, { cause: err });
    default:
      return new TransientError(`${host} failed while reading ${what} (HTTP ${err.status}: ${message}); it will be retried.`, { cause: err });
  }
}

export const isStatus = (err: unknown, ...statuses: number[]): boolean => err instanceof RequestError && statuses.includes(err.status);
