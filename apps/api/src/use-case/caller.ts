import { DomainError } from '@crs/domain/errors';
import type { CommandContext } from '@crs/eventstore/command-handling';
import type { ApiKeyRecord } from '@crs/persistence/api-keys';

/**
 * Who sends a command or query: the API key that authenticated the request (its organization and the databases it
 * reaches) and the context its events record (organization, actor, request id). Controllers build it from the request
 * (`callerOf` in http/command-context.ts); handlers never see the request.
 */
export interface Caller {
  key: ApiKeyRecord;
  ctx: CommandContext;
}

/**
 * A change to organization-wide configuration (the indexing webhook and its signing secret) reaches every database's
 * events, so a key limited to some databases may not make it (403 FORBIDDEN).
 */
export function requireOrganizationKey(caller: Caller, action: string): void {
  if (caller.key.databases !== null) {
    throw new DomainError('forbidden', 'FORBIDDEN', `this API key is limited to its listed databases and cannot ${action}: that takes a key of the whole organization`);
  }
}
