import { ConfigurationError, ProviderError, ResourceGoneError, TransientError } from '../../provider-errors';
import { ConfluenceHttpError } from './confluence-transport';

/**
 * Places what a call failed with. The transport already turned 401, 403, 429, 5xx, redirects and network failures
 * into provider errors; what is left is a 4xx whose meaning depends on what was asked: a 404 on a space is a space
 * that is gone (or that the account can no longer see, which Confluence answers the same way), a 400 a query
 * Confluence refused.
 */
export function toProviderError(err: unknown, what: { space?: string; site: string }): unknown {
  if (err instanceof ProviderError) return err;
  if (err instanceof ConfluenceHttpError) {
    if (err.status === 404 && what.space !== undefined) {
      return new ResourceGoneError(`Space ${what.space} no longer exists at ${what.site}, or the connector's account can no longer see it (${err.message}).`, { cause: err });
    }
    if (err.status === 408) return new TransientError(`${err.message}. The sync is tried again later.`, { cause: err });
    return new ConfigurationError(`${err.message}. Check the resource's space key.`, { cause: err });
  }
  return err;
}
