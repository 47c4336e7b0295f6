import type { LookupFn } from '@crs/network/address-policy';
import { privateTargetReason } from '@crs/network/public-targets';
import { ConfigurationError, TargetForbiddenError } from './provider-errors';

/**
 * A URL a person gave in a connector's credentials (a self-hosted site's base URL, a key's token endpoint), checked
 * before anything is sent to it: an http(s) URL without a user, query or fragment; https only, since a secret travels
 * to it (http is allowed with `allowPrivateNetworks`, for development against a local fake); and a host on the public
 * internet (TargetForbiddenError otherwise, unless `allowPrivateNetworks`). Connections made later check their
 * addresses again at connect time (`publicOnlyAgents`), since a name may resolve elsewhere by then.
 */
export async function checkUserUrl(raw: unknown, field: string, opts: { allowPrivateNetworks: boolean; lookup?: LookupFn; example: string }): Promise<URL> {
  if (typeof raw !== 'string' || raw.trim() === '') throw new ConfigurationError(`The credentials need ${field}, such as ${opts.example}.`);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigurationError(`${field} '${raw}' is not a URL; give one such as ${opts.example}.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigurationError(`${field} must start with https:// (it starts with ${url.protocol}//).`);
  if (url.username || url.password) throw new ConfigurationError(`${field} must not carry a user name or password.`);
  if (url.search || url.hash) throw new ConfigurationError(`${field} must be an address alone, without a query or fragment.`);
  if (opts.allowPrivateNetworks) return url;
  if (url.protocol !== 'https:') throw new TargetForbiddenError(`${field} uses http://; credentials may only be sent over https://.`);
  const reason = await privateTargetReason(url.hostname, opts.lookup ? { lookup: opts.lookup } : {});
  if (reason) throw new TargetForbiddenError(`${field} leads to ${url.hostname}, which is not on the public internet (${reason}); connectors may not connect to this service's own network.`);
  return url;
}
