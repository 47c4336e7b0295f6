import type { LookupFn } from '@crs/network/address-policy';
import { ConfigurationError } from '../../provider-errors';
import type { Credentials } from '../../provider.port';
import { checkUserUrl } from '../../user-target';

/** Where a connector's wiki is and who it signs in as, from its credentials. */
export interface ConfluenceTarget {
  /** The wiki's root URL with no trailing slash (`https://example.atlassian.net/wiki`); the REST API is under `/rest/api`. */
  wikiUrl: string;
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
 * (`https://wiki.example.com`, or with its context path). It is checked by `checkUserUrl` before anything is sent:
 * no user, query or fragment; https only, as the API token travels in every request (plain http only where private
 * networks are allowed: development and tests); and a host on the public internet (TargetForbiddenError otherwise).
 */
export async function targetFromCredentials(credentials: Credentials, opts: { allowPrivateNetworks: boolean; lookup?: LookupFn }): Promise<ConfluenceTarget> {
  const url = await checkUserUrl(credentials.base_url, 'base_url', { allowPrivateNetworks: opts.allowPrivateNetworks, ...(opts.lookup ? { lookup: opts.lookup } : {}), example: 'https://example.atlassian.net/wiki' });
  let path = url.pathname.replace(/\/+$/, '');
  if (path === '' && url.hostname.toLowerCase().endsWith('.atlassian.net')) path = '/wiki';
  const email = field(credentials, 'email');
  if (!EMAIL.test(email)) throw new ConfigurationError(`email "${email}" is not an email address; give the Atlassian account's email that owns the API token.`);
  return { wikiUrl: `${url.origin}${path}`, site: `${url.host}${path}`, email, apiToken: field(credentials, 'api_token') };
}
