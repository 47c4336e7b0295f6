import { retryAtFrom } from '../../retry-after';
import { AuthError, ConfigurationError, ProviderError, RateLimitedError, ResourceGoneError, ScopeError, TransientError } from '../../provider-errors';

/**
 * What the Drive client (gaxios) rejects with, as far as a connector reads it: the HTTP status, the response's headers
 * and Drive's error body `{ error: { code, message, errors: [{ reason }], status } }`; no status at all for a network
 * failure.
 */
interface DriveHttpError {
  status?: number;
  code?: string | number;
  message?: string;
  response?: { status?: number; headers?: Headers; data?: unknown };
}

/** Drive's reasons for throttling: wait and try again. */
const RATE_LIMIT_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'sharingRateLimitExceeded']);
/** Quotas counted per day: retrying within the hour is pointless. */
const DAILY_LIMIT_REASONS = new Set(['dailyLimitExceeded', 'quotaExceeded', 'dailyLimitExceededUnreg']);

/** The wait when Drive throttles without a Retry-After (Drive's advice is an exponential backoff from 1 s; a deferred sync waits at least this). */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;
const DAILY_LIMIT_WAIT_MS = 3600_000;

export function httpStatus(err: unknown): number | undefined {
  const e = err as DriveHttpError | undefined;
  const status = e?.response?.status ?? e?.status;
  return typeof status === 'number' ? status : undefined;
}

/** Drive's first error reason (`errors[0].reason`), e.g. `rateLimitExceeded`, `notFound`, `insufficientFilePermissions`. */
export function driveReason(err: unknown): string | undefined {
  const data = (err as DriveHttpError | undefined)?.response?.data as { error?: { errors?: { reason?: unknown }[]; status?: unknown } } | undefined;
  const reason = data?.error?.errors?.[0]?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

function driveMessage(err: unknown): string {
  const e = err as DriveHttpError | undefined;
  const data = e?.response?.data as { error?: { message?: unknown } } | undefined;
  const message = data?.error?.message;
  return typeof message === 'string' ? message : (e?.message ?? String(err));
}

/**
 * Maps a Drive client failure to the provider errors. `what` says what the call was doing ("listing folder X"), for
 * the message a person reads. A 404 is the resource being gone; a caller for whom a 404 means one file vanished
 * handles it before calling this.
 */
export function toProviderError(err: unknown, what: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const status = httpStatus(err);
  const reason = driveReason(err);
  const detail = driveMessage(err);
  const e = err as DriveHttpError | undefined;
  if (status === 429 || (status === 403 && reason !== undefined && RATE_LIMIT_REASONS.has(reason))) {
    const retryAt = retryAtFrom(e?.response?.headers?.get('retry-after'), new Date(), DEFAULT_RATE_LIMIT_WAIT_MS);
    return new RateLimitedError(`Google Drive is throttling the connector while ${what} (${reason ?? status}); the sync resumes after ${retryAt.toISOString()}.`, retryAt, { cause: err });
  }
  if (status === 403 && reason !== undefined && DAILY_LIMIT_REASONS.has(reason)) {
    const retryAt = retryAtFrom(e?.response?.headers?.get('retry-after'), new Date(), DAILY_LIMIT_WAIT_MS);
    return new RateLimitedError(`The Google Cloud project's daily Drive API quota is used up (${reason}); the sync resumes after ${retryAt.toISOString()}. A higher quota can be asked for in the Google Cloud console.`, retryAt, { cause: err });
  }
  if (status === 401) {
    return new AuthError(`Google Drive refused the connector's credentials while ${what} (${detail}): the access token expired or was revoked, or the service account key was deleted. Set new credentials on the connector.`, { cause: err });
  }
  if (status === 403) {
    return new ScopeError(`Google Drive does not let the connector's account read this while ${what} (${reason ?? 'forbidden'}: ${detail}). Share the folder or shared drive with the account, or grant it the drive.readonly scope.`, { cause: err });
  }
  if (status === 404) return new ResourceGoneError(`Google Drive has no such item, or no longer shows it to the connector's account, while ${what} (${detail}).`, { cause: err });
  if (status === 400) return new ConfigurationError(`Google Drive rejected a request while ${what} (${detail}).`, { cause: err });
  if (status !== undefined && status >= 500) return new TransientError(`Google Drive failed while ${what} (${status}: ${detail}); the sync is tried again later.`, { cause: err });
  return new TransientError(`Google Drive could not be reached while ${what} (${detail}); the sync is tried again later.`, { cause: err });
}
