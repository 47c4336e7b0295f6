import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Version3Client } from 'jira.js';
import { privateTargetReason, publicOnlyLookup } from '@crs/network/public-targets';
import { ConfigurationError, TargetForbiddenError } from '../../provider-errors';
import type { Credentials, ProviderContext } from '../../provider.port';

/** The connector's credentials, read and checked: where the site is and who signs in. */
export interface JiraSite {
  /** origin and context path, no trailing slash: `https://acme.atlassian.net`, `https://jira.example.com/jira` */
  baseUrl: string;
  host: string;
  email: string;
  apiToken: string;
}

export interface JiraClientSettings {
  allowPrivateNetworks: boolean;
  /** bound on one HTTP request */
  requestTimeoutMs: number;
  /** bound on the body of one answer, in bytes; a larger answer is refused */
  maxResponseBytes: number;
}

const text = (credentials: Credentials, field: string, what: string): string => {
  const value = credentials[field];
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigurationError(`The credentials need ${field}: ${what}.`);
  return value.trim();
};

/** Reads `base_url`, `email` and `api_token`; a base URL must be an http(s) URL without a user, query or fragment. */
export function siteFromCredentials(credentials: Credentials): JiraSite {
  const raw = text(credentials, 'base_url', 'the address of the Jira site, such as https://your-domain.atlassian.net');
  const email = text(credentials, 'email', 'the email address of the Atlassian account the API token belongs to');
  const apiToken = text(credentials, 'api_token', 'an API token of that account (id.atlassian.com, Security, API tokens)');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigurationError(`The base_url '${raw}' is not a URL; give the site's address, such as https://your-domain.atlassian.net.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigurationError(`The base_url must start with https:// (it starts with ${url.protocol}//).`);
  if (url.username || url.password) throw new ConfigurationError('The base_url must not carry a user name or password; put the account in email and api_token.');
  if (url.search || url.hash) throw new ConfigurationError('The base_url must be the site address alone, without a query or fragment.');
  const path = url.pathname.replace(/\/+$/, '');
  return { baseUrl: `${url.origin}${path}`, host: url.hostname, email, apiToken };
}

/**
 * Refuses a site that is not on the public internet (unless the operator allowed private networks), before anything
 * is sent: the API token must not be handed to a host on this service's own network. http:// is refused for the same
 * reason on public hosts, since the token would travel in clear.
 */
export async function refusePrivateSite(site: JiraSite, settings: JiraClientSettings): Promise<void> {
  if (settings.allowPrivateNetworks) return;
  if (!site.baseUrl.startsWith('https://')) throw new TargetForbiddenError(`The base_url ${site.baseUrl} uses http://; the API token may only be sent over https://.`);
  const reason = await privateTargetReason(site.host);
  if (reason) throw new TargetForbiddenError(`The base_url leads to ${site.host}, which is not on the public internet (${reason}); connectors may not connect to this service's own network.`);
}

/**
 * A jira.js client for one call of the provider. Without allowPrivateNetworks every connection resolves its host
 * through `publicOnlyLookup` (a name that resolves to a private address by the time it connects is refused) and
 * redirects are not followed, so nothing leads the client off the checked site. An answer whose body runs past
 * `maxResponseBytes` is dropped as it arrives (Axios's `maxContentLength`). The call's abort signal cancels the request
 * in flight.
 */
export function jiraClient(site: JiraSite, ctx: ProviderContext, settings: JiraClientSettings): Version3Client {
  const lookup = settings.allowPrivateNetworks ? {} : { lookup: publicOnlyLookup() };
  return new Version3Client({
    host: site.baseUrl,
    authentication: { basic: { email: site.email, apiToken: site.apiToken } },
    baseRequestConfig: {
      timeout: settings.requestTimeoutMs,
      maxContentLength: settings.maxResponseBytes,
      maxRedirects: 0,
      httpAgent: new HttpAgent(lookup),
      httpsAgent: new HttpsAgent(lookup),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    },
  });
}
