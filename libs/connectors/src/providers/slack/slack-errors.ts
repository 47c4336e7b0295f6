import { ErrorCode, type WebAPICallError } from '@slack/web-api';
import { AuthError, ConfigurationError, ProviderError, RateLimitedError, ResourceGoneError, ScopeError, TransientError } from '../../provider-errors';

/** Slack's error codes for a token it no longer (or never) accepts: the connector needs a new one. */
const TOKEN_REFUSED: Record<string, string> = {
  token_revoked: 'the token was revoked (the app was uninstalled or its token rotated)',
  token_expired: 'the token expired',
  invalid_auth: 'Slack does not recognise the token',
  not_authed: 'no token was sent',
  account_inactive: "the app's bot user or the workspace was deactivated",
  no_permission: 'the workspace no longer grants the app access',
  team_access_not_granted: 'the workspace has not granted the app access',
  org_login_required: 'the workspace is migrating to an Enterprise Grid organization',
  ekm_access_denied: "the workspace's key management denies access",
};

/** Slack's codes for an outage on its side: the same call may succeed later. */
const SLACK_UNAVAILABLE = new Set(['fatal_error', 'internal_error', 'service_unavailable', 'request_timeout', 'ratelimited', 'invalid_cursor']);

function isWebApiError(err: unknown): err is WebAPICallError {
  const code = (err as { code?: unknown } | null)?.code;
  return code === ErrorCode.PlatformError || code === ErrorCode.RateLimitedError || code === ErrorCode.HTTPError || code === ErrorCode.RequestError;
}

/** The code Slack answered a call with (`ok: false`), when it was a platform error. */
export function slackErrorCode(err: unknown): string | undefined {
  return isWebApiError(err) && err.code === ErrorCode.PlatformError ? err.data.error : undefined;
}

/**
 * What `@slack/web-api` throws, as the provider errors the sync engine acts on. The client is built with
 * `rejectRateLimitedCalls`, so a 429 arrives as a `WebAPIRateLimitedError` with Retry-After in seconds and becomes a
 * `RateLimitedError` whose `retryAt` is `now` plus that wait; HTTP 5xx and network failures arrive after the client's
 * bounded retries and are transient; `ok: false` answers are sorted by Slack's error code. `channel` names the
 * resource in messages; no message ever carries the token.
 */
export function toProviderError(err: unknown, now: Date, channel?: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const where = channel ? ` reading channel ${channel}` : '';
  if (!isWebApiError(err)) {
    const detail = err instanceof Error ? err.message : String(err);
    return new TransientError(`Talking to Slack failed${where}: ${detail}. The sync is tried again later.`, { cause: err });
  }
  switch (err.code) {
    case ErrorCode.RateLimitedError:
      return new RateLimitedError(`Slack rate-limited the app${where}; it asked to wait ${err.retryAfter} s.`, new Date(now.getTime() + err.retryAfter * 1000), { cause: err });
    case ErrorCode.HTTPError:
      return new TransientError(`Slack answered HTTP ${err.statusCode}${where}, also after retrying. The sync is tried again later.`, { cause: err });
    case ErrorCode.RequestError:
      return new TransientError(`Slack could not be reached${where} (${err.original.message}). The sync is tried again later.`, { cause: err });
    case ErrorCode.PlatformError:
      return platformError(err.data.error, err.data as { needed?: string; provided?: string }, where, channel, err);
  }
}

function platformError(code: string, data: { needed?: string; provided?: string }, where: string, channel: string | undefined, cause: unknown): ProviderError {
  const refused = TOKEN_REFUSED[code];
  if (refused) return new AuthError(`Slack refused the bot token${where} (${code}: ${refused}). Reinstall the app if needed and set its bot token (xoxb-…) on the connector.`, { cause });
  if (code === 'missing_scope') {
    const has = data.provided ? ` (it has ${data.provided})` : '';
    return new ScopeError(`The bot token lacks the scope ${data.needed ?? 'this call needs'}${has}${where}. Add it to the app's bot token scopes and reinstall the app.`, { cause });
  }
  if (code === 'not_in_channel') return new ScopeError(`The app is not a member of channel ${channel ?? ''}; invite it (/invite @app-name in the channel) to sync it.`, { cause });
  if (code === 'channel_not_found') {
    return new ResourceGoneError(`Channel ${channel ?? ''} does not exist or the app can no longer see it (deleted, or a private channel the app was removed from).`, { cause });
  }
  if (SLACK_UNAVAILABLE.has(code)) return new TransientError(`Slack failed${where} (${code}). The sync is tried again later.`, { cause });
  return new ConfigurationError(`Slack refused a call${where} (${code}).`, { cause });
}
