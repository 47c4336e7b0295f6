import { AuthError, ConfigurationError, ProviderError, ResourceGoneError, ScopeError, TransientError } from '../../provider-errors';
import type { PostgresTarget } from './postgres-target';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);

interface PgLikeError {
  code?: string;
  message?: string;
}

/** The connection itself is gone (terminated, reset, refused): a new connection may work where this one cannot. */
export function isConnectionLoss(err: unknown): boolean {
  const e = err as PgLikeError;
  const code = e?.code ?? '';
  if (NETWORK_CODES.has(code) && code !== 'ENOTFOUND') return true;
  // 08: connection exceptions; 57P01-03: the server shut down or ended the backend; 25P03 and 57P05: it ended an
  // idle session (idle_in_transaction_session_timeout, idle_session_timeout).
  if (code.startsWith('08') || ['57P01', '57P02', '57P03', '57P05', '25P03'].includes(code)) return true;
  return !code && /Connection terminated|Client has encountered a connection error|not queryable|timeout expired/i.test(e?.message ?? '');
}

/**
 * Maps what `pg` throws to the provider errors: SQLSTATE class 28 is the credentials, 42501 a missing grant, 42P01 and
 * 3F000 a relation or schema that is gone, the connection and operator classes (08, 53, 57, 40) and network errors are
 * transient, and the rest is a setting that cannot work (an unknown column, a value of the wrong type).
 */
export function toProviderError(err: unknown, target: PostgresTarget, resourceId?: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = err as PgLikeError;
  const code = e?.code ?? '';
  const detail = e?.message ?? String(err);
  const where = `${target.database} on ${target.host}:${target.port}`;
  const what = resourceId ? ` while reading ${resourceId}` : '';
  if (code === '28P01' || code === '28000' || code.startsWith('28')) {
    return new AuthError(`The database ${where} refused the login of user "${target.user}"${what} (${detail}). Update the connector's connection string or restore the role's password.`, { cause: err });
  }
  if (code === '42501') {
    return new ScopeError(`User "${target.user}" may not read${resourceId ? ` ${resourceId}` : ' this'} in ${where} (${detail}). Grant it SELECT (and USAGE on the schema).`, { cause: err });
  }
  if (code === '42P01' || code === '3F000') {
    return new ResourceGoneError(`${resourceId ?? 'The relation'} no longer exists in ${where} (${detail}).`, { cause: err });
  }
  if (code === '3D000') {
    return new ConfigurationError(`The database in the connection string does not exist on ${target.host}:${target.port} (${detail}).`, { cause: err });
  }
  if (code === '57014') {
    return new TransientError(`A query${what} in ${where} ran past the statement timeout and was cancelled (${detail}). An index on the keyset columns, or a smaller page size, shortens it.`, { cause: err });
  }
  if (code === '25006') {
    return new ConfigurationError(`Reading${what ? what : ' the resource'} tried to write to the database, and connectors only read (${detail}). A view that calls a function which writes cannot be synced.`, { cause: err });
  }
  if (isConnectionLoss(err) || /^(08|53|57|40|58)/.test(code) || NETWORK_CODES.has(code)) {
    return new TransientError(`The database ${where} could not be reached or dropped the connection${what} (${detail}). The sync is tried again later.`, { cause: err });
  }
  if (code) {
    return new ConfigurationError(`The database ${where} rejected a query${what} (${code}: ${detail}). Check the resource's column settings.`, { cause: err });
  }
  return new TransientError(`Talking to the database ${where} failed${what}: ${detail}`, { cause: err });
}
