import { privateTargetReason } from '@crs/network/public-targets';
import { ConfigurationError, TargetForbiddenError } from '../../provider-errors';
import type { Credentials } from '../../provider.port';

/** Where a connector's wiki is and who it signs in as, from its credentials. */
export interface ConfluenceTarget {
  /** The wiki's root URL with no trailing slash (`https://example.atlassian.net/wiki`); the REST API is under `/rest/api`. */
  wikiUrl: string;
  /** host name alone, for the SSRF check */
  hostname: string;
  /** `example.atlassian.net/wiki`: the account scope and what messages name */
  site: string;
  email: string;
  apiToken: string;
}

const EMAIL = /^[^\s@:]+@[^\s@:]+\.[^\s@:]+$/;

function field(credentials: Credentials, name: string): string {
  const value = credentials[name];
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigurationError(`The credentials lack ${name}.`);
  return value.trim();
}

/**
 * Reads `base_url`, `email` and `api_token`. The base URL is the wiki as a browser shows it: a Confluence Cloud site
 * (`https://example.atlassian.net`, `/wiki` added when missing) or a self-hosted wiki's root
 * (`https://wiki.example.com`, or with its context path). Plain `http` is accepted only where private networks are
 * allowed (development and tests), as the API token travels in every request.
 */
export function targetFromCredentials(credentials: Credentials, allowPrivateNetworks: boolean): ConfluenceTarget {
  const raw = field(credentials, 'base_url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigurationError(`base_url "${raw}" is not a URL; give the wiki's address, e.g. https://example.atlassian.net/wiki.`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowPrivateNetworks)) {
    throw new ConfigurationError(`base_url must use https (got ${url.protocol.replace(':', '')}): the API token is sent with every request.`);
  }
  if (url.username || url.password) throw new ConfigurationError('base_url must not carry a user name or password; use email and api_token.');
  if (url.search || url.hash) throw new ConfigurationError('base_url must be the wiki\'s address alone, without a query or fragment.');
  let path = url.pathname.replace(/\/+$/, '');
  if (path === '' && url.hostname.toLowerCase().endsWith('.atlassian.net')) path = '/wiki';
  const email = field(credentials, 'email');
  if (!EMAIL.test(email)) throw new ConfigurationError(`email "${email}" is not an email address; give the Atlassian account's email that owns the API token.`);
  return { wikiUrl: `${url.origin}${path}`, hostname: url.hostname, site: `${url.host}${path}`, email, apiToken: field(credentials, 'api_token') };
}

/** Refuses a wiki on a loopback, private, link-local or reserved address before any request is made. */
export async function refusePrivateTarget(target: ConfluenceTarget): Promise<void> {
  const reason = await privateTargetReason(target.hostname);
  if (reason) throw new TargetForbiddenError(`base_url leads to ${target.hostname}, which is not on the public internet (${reason}); connectors may not connect to this service's own network.`);
}
