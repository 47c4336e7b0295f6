/**
 * The errors a provider throws (or, for one document, yields in a `failure` event). Each says what went wrong in
 * words a person who set up the connector can act on; `kind` is what the scheduler branches on; `cause` keeps the
 * client library's error for the logs.
 */
export type ProviderErrorKind = 'auth' | 'scope' | 'rate_limited' | 'transient' | 'resource_gone' | 'configuration' | 'document';

export abstract class ProviderError extends Error {
  abstract readonly kind: ProviderErrorKind;
  /** Whether the same call may succeed later without anyone changing anything. */
  abstract readonly retryable: boolean;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The credentials were refused: wrong, expired or revoked. Syncing stops until someone changes them. */
export class AuthError extends ProviderError {
  readonly kind = 'auth';
  readonly retryable = false;
}

/** The credentials work but may not read this (a missing grant or OAuth scope). */
export class ScopeError extends ProviderError {
  readonly kind = 'scope';
  readonly retryable = false;
}

/** The provider asked to be left alone until `retryAt`. */
export class RateLimitedError extends ProviderError {
  readonly kind = 'rate_limited';
  readonly retryable = true;

  constructor(
    message: string,
    readonly retryAt: Date,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A failure that may pass on its own: the network, a restart, a timeout. */
export class TransientError extends ProviderError {
  readonly kind = 'transient';
  readonly retryable = true;
}

/** The resource no longer exists at the provider (a dropped table, a deleted channel). */
export class ResourceGoneError extends ProviderError {
  readonly kind = 'resource_gone';
  readonly retryable = false;
}

/** The connector or resource settings cannot work as given (an unknown column, a missing id, a refused target). */
export class ConfigurationError extends ProviderError {
  readonly kind = 'configuration';
  readonly retryable = false;
}

/**
 * The credentials lead somewhere a connector may not connect: a loopback, private, link-local or reserved address
 * (the service's own network), unless the operator allowed private networks (CONNECTOR_ALLOW_PRIVATE_NETWORKS). A
 * configuration error to the sync (nothing changes until someone changes the credentials); the API answers it as
 * CONNECTOR_TARGET_FORBIDDEN.
 */
export class TargetForbiddenError extends ConfigurationError {}

/** One document cannot be synced (too large, unreadable); the rest of the resource can. Carried by `failure` events. */
export class DocumentError extends ProviderError {
  readonly kind = 'document';
  readonly retryable = false;
}

export function isProviderError(err: unknown): err is ProviderError {
  return err instanceof ProviderError;
}
