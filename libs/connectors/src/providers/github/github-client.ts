import http from 'node:http';
import https from 'node:https';
import { Octokit } from '@octokit/rest';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import type { LookupFn } from '@crs/network/address-policy';
import { ConfigurationError } from '../../provider-errors';
import type { Credentials, ProviderContext } from '../../provider.port';
import { checkUserUrl } from '../../user-target';
import { githubFetch, type FetchLike } from './github-fetch';

/** Octokit with the throttling and retry plugins: the client every call of the provider goes through. */
export const GitHubOctokit = Octokit.plugin(throttling, retry);
export type GitHubClient = InstanceType<typeof GitHubOctokit>;

export const GITHUB_API_URL = 'https://api.github.com';

export interface GitHubClientSettings {
  /** The API origin used when the credentials name no `base_url` (an operator setting; tests point it at a fake). */
  apiUrl: string;
  allowPrivateNetworks: boolean;
  /** Throttling waits up to this long are slept through by the client; longer ones become a RateLimitedError. */
  shortWaitSeconds: number;
  /** Retries of a 5xx (or a network error) before it becomes a TransientError. */
  serverErrorRetries: number;
  /** The retry plugin waits (n + 1)² × this many milliseconds before the n-th retry of a 5xx. */
  retryBaseMs: number;
  /** How names are resolved for the SSRF checks (tests replace it). */
  lookup?: LookupFn;
  /** The agents a user-given `base_url` is reached through unless private networks are allowed (`publicOnlyAgents`). */
  publicAgents: { httpAgent: http.Agent; httpsAgent: https.Agent };
  /** The most bytes of one response that are read (a blob's limit is set per call, from the document limit). */
  maxResponseBytes: number;
  /** The overall deadline of one call, redirects included. */
  requestTimeoutMs: number;
}

/** A client for one call of the provider, and the API origin it talks to (for messages). */
export interface ConnectedClient {
  client: GitHubClient;
  /** `github.com`, or the Enterprise host of a `base_url`: for messages, the account scope and group principals. */
  host: string;
  /** The client's fetch with another byte limit, for one call's `request.fetch` (a blob is read up to the document limit). */
  fetchUpTo(maxBytes: number): FetchLike;
}

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export function tokenOf(credentials: Credentials): string {
  const token = credentials.token;
  if (typeof token !== 'string' || token.trim() === '') throw new ConfigurationError('The credentials need a "token": a GitHub personal access token (classic or fine-grained) or an app installation token.');
  return token.trim();
}

/**
 * The API URL the credentials lead to: their `base_url` (GitHub Enterprise Server, e.g.
 * `https://github.example.com/api/v3`) or the operator's `apiUrl`. A user-given URL is checked by `checkUserUrl`
 * before anything is sent: https only (the token travels to it), no user, query or fragment, and, unless private
 * networks are allowed, a public host (TargetForbiddenError otherwise).
 */
async function apiUrlOf(credentials: Credentials, settings: GitHubClientSettings): Promise<{ url: string; userGiven: boolean }> {
  const raw = credentials.base_url;
  if (raw === undefined || raw === null || raw === '') return { url: settings.apiUrl.replace(/\/+$/, ''), userGiven: false };
  const url = await checkUserUrl(raw, 'base_url', { allowPrivateNetworks: settings.allowPrivateNetworks, ...(settings.lookup ? { lookup: settings.lookup } : {}), example: 'https://github.example.com/api/v3' });
  return { url: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, userGiven: true };
}

/**
 * An Octokit for one provider call. Throttling: a wait of at most `shortWaitSeconds` is retried once by the
 * throttling plugin (403 secondary limit or exhausted quota); a longer one is not, and surfaces as the 403 whose
 * headers the error mapping turns into a RateLimitedError. A 429 is kept from the retry plugin (`doNotRetry`), which
 * would ignore its Retry-After, and mapped the same way. 5xx and network errors are retried `serverErrorRetries`
 * times. Every call goes through `githubFetch`: a byte limit, an overall deadline, and redirects followed only within
 * the API's origin; a user-given base URL connects through the public-only agents, which check every address as
 * they connect (unless private networks are allowed).
 */
export async function connect(ctx: ProviderContext, settings: GitHubClientSettings): Promise<ConnectedClient> {
  const token = tokenOf(ctx.credentials);
  const { url, userGiven } = await apiUrlOf(ctx.credentials, settings);
  const agents = userGiven && !settings.allowPrivateNetworks ? settings.publicAgents : { httpAgent: http.globalAgent, httpsAgent: https.globalAgent };
  const fetchUpTo = (maxBytes: number) => githubFetch({ ...agents, maxBytes, timeoutMs: settings.requestTimeoutMs });
  const shortWait = (retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number) => retryAfter <= settings.shortWaitSeconds && retryCount < 1;
  const client = new GitHubOctokit({
    auth: token,
    baseUrl: url,
    userAgent: 'context-retrieval-service-connector',
    log: silent,
    request: {
      fetch: fetchUpTo(settings.maxResponseBytes),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    },
    throttle: { onRateLimit: shortWait, onSecondaryRateLimit: shortWait },
    retry: { doNotRetry: [400, 401, 403, 404, 409, 410, 422, 429, 451], retries: settings.serverErrorRetries, retryAfterBaseValue: settings.retryBaseMs },
  });
  // The operator's API URL stands for github.com (it is api.github.com, or a stand-in for it in tests).
  const host = userGiven && new URL(url).hostname !== 'api.github.com' ? new URL(url).host : 'github.com';
  return { client, host, fetchUpTo };
}
