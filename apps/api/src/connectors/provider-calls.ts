import { AuthError, ConfigurationError, isProviderError, RateLimitedError, ScopeError, TargetForbiddenError } from '@crs/connectors/provider-errors';
import type { ProviderRegistry } from '@crs/connectors/provider-registry';
import type { ConnectorProvider, Credentials, CredentialField, ProviderContext } from '@crs/connectors/provider.port';
import { DomainError, invalid } from '@crs/domain/errors';

/** How long a request waits for a provider (validating credentials, discovering resources) before answering 503. */
export const PROVIDER_CALL_TIMEOUT_MS = 20_000;

/** The largest credentials object a connector takes (its JSON, in characters). */
export const MAX_CREDENTIALS_CHARACTERS = 16_384;

/** The provider of that id, or 400 naming the known ones. */
export function providerOf(registry: ProviderRegistry, id: unknown, field = 'provider'): ConnectorProvider {
  if (typeof id !== 'string' || id.trim() === '') throw invalid(`${field} is required: one of ${registry.ids().join(', ')}`);
  const provider = registry.get(id);
  if (!provider) throw invalid(`${field} '${id}' is not a known provider; known providers: ${registry.ids().join(', ')}`);
  return provider;
}

/**
 * The credentials as sent, checked against what the provider declares: an object whose required fields are
 * non-empty strings, with no field the provider does not know (a typo would otherwise be stored and ignored).
 * Messages name fields, never values.
 */
export function credentialsFor(provider: ConnectorProvider, raw: unknown): Credentials {
  const fields: readonly CredentialField[] = provider.description.credentialFields;
  const names = fields.map((f) => f.name).join(', ');
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(`credentials must be an object with the fields of provider '${provider.description.id}': ${names}`);
  const credentials = raw as Record<string, unknown>;
  for (const key of Object.keys(credentials)) {
    if (!fields.some((f) => f.name === key)) throw invalid(`credentials.${key} is not a credential of provider '${provider.description.id}'; its fields: ${names}`);
  }
  for (const f of fields) {
    const v = credentials[f.name];
    if (v === undefined || v === null) {
      if (f.required) throw invalid(`credentials.${f.name} is required (${f.description})`);
      continue;
    }
    if (typeof v !== 'string' || v.trim() === '') throw invalid(`credentials.${f.name} must be a non-empty string`);
  }
  if (JSON.stringify(credentials).length > MAX_CREDENTIALS_CHARACTERS) throw invalid(`credentials are larger than ${MAX_CREDENTIALS_CHARACTERS} characters`);
  return credentials;
}

/**
 * Calls the provider with the connector's credentials, bounded by PROVIDER_CALL_TIMEOUT_MS (the call's signal is
 * aborted then), and answers its errors in the API's terms:
 * - AuthError, ScopeError: 422 CONNECTOR_CREDENTIALS_REFUSED (the request is well formed; the provider refused what
 *   it carries), with the provider's message, which says what to change;
 * - TargetForbiddenError: 400 CONNECTOR_TARGET_FORBIDDEN (the credentials lead to a private address);
 * - ConfigurationError: 400 CONNECTOR_CONFIGURATION_INVALID (credentials that cannot work as given);
 * - TransientError, RateLimitedError, a timeout: 503 CONNECTOR_UNREACHABLE (nothing was changed; retry later).
 * The messages never hold a credential's value: the providers' messages name hosts, users and databases only.
 */
export async function callProvider<T>(what: string, call: (ctx: ProviderContext) => Promise<T>, credentials: Credentials, timeoutMs = PROVIDER_CALL_TIMEOUT_MS): Promise<T> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort(new Error('timed out'));
      reject(new DomainError('unavailable', 'CONNECTOR_UNREACHABLE', `The provider did not answer within ${Math.round(timeoutMs / 1000)} seconds while ${what}; nothing was changed. Try again later.`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([call({ credentials, signal: abort.signal }), timeout]);
  } catch (err) {
    throw providerFailure(err, what);
  } finally {
    clearTimeout(timer);
  }
}

function providerFailure(err: unknown, what: string): unknown {
  if (err instanceof DomainError || !isProviderError(err)) return err;
  if (err instanceof AuthError || err instanceof ScopeError) {
    return new DomainError('unprocessable', 'CONNECTOR_CREDENTIALS_REFUSED', `The provider refused the credentials while ${what}: ${err.message}`);
  }
  if (err instanceof TargetForbiddenError) return new DomainError('validation', 'CONNECTOR_TARGET_FORBIDDEN', err.message);
  if (err instanceof ConfigurationError) return new DomainError('validation', 'CONNECTOR_CONFIGURATION_INVALID', `The credentials cannot work as given (${what}): ${err.message}`);
  const wait = err instanceof RateLimitedError ? ` The provider asked to wait until ${err.retryAt.toISOString()}.` : '';
  return new DomainError('unavailable', 'CONNECTOR_UNREACHABLE', `The provider could not be reached while ${what}: ${err.message}${wait} Nothing was changed; try again later.`);
}
