import type { SyncFailureKind } from '@crs/domain/connectors/connector.events';
import type { ProviderError } from '@crs/connectors/provider-errors';

/** The failure kind a provider error ends a sync with (a rate limit defers it instead). */
export function failureKind(err: ProviderError): SyncFailureKind {
  switch (err.kind) {
    case 'auth':
    case 'scope':
    case 'transient':
    case 'resource_gone':
    case 'configuration':
      return err.kind;
    default:
      return 'internal';
  }
}

/** The message a person reads on the connector's status: what happened and what to do. */
export function failureMessage(err: ProviderError, provider: string): string {
  switch (err.kind) {
    case 'auth':
      return `${provider} refused the connector's credentials (${err.message}); set new credentials on the connector to resume syncing`;
    case 'scope':
      return `the credentials may not read this resource (${err.message}); grant access at ${provider}, then sync again`;
    case 'transient':
      return `${provider} could not be reached or failed for now (${err.message}); the sync will be retried`;
    case 'resource_gone':
      return `the resource no longer exists at ${provider} (${err.message}); remove it from the connector or restore it at the source`;
    case 'configuration':
      return `the connector or resource settings cannot work (${err.message}); change them and sync again`;
    default:
      return err.message;
  }
}
