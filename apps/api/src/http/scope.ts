import { invalid, notFound } from '@crs/domain/errors';
import { assertCollectionName } from '@crs/domain/names';
import { addDeprecation, type RequestContext } from './request-context';

/** A validation error about a value sent under a deprecated name: `detail` names it and its replacement (spec: Errors). */
export function deprecatedFieldInvalid(message: string, deprecated: string, preferred: string) {
  return invalid(message, { error_code: 'INVALID_INPUT', message, deprecated: true, deprecated_field: deprecated, preferred_field: preferred, success: false });
}

export interface ScopeInput {
  database?: unknown;
  tenant_id?: unknown;
  collection?: unknown;
  sub_tenant_id?: unknown;
}

export interface Scope {
  database?: string;
  collection?: string;
}

function pick(ctx: RequestContext, input: ScopeInput, preferred: 'database' | 'collection', deprecated: 'tenant_id' | 'sub_tenant_id'): string | undefined {
  const a = input[preferred];
  const b = input[deprecated];
  for (const [field, value] of [[preferred, a], [deprecated, b]] as const) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value.length === 0) {
      const message = `${field} must be a non-empty string`;
      throw field === deprecated ? deprecatedFieldInvalid(message, deprecated, preferred) : invalid(message);
    }
  }
  if (b !== undefined && b !== null) {
    addDeprecation(ctx, deprecated, preferred);
    ctx.scope[deprecated] = b as string;
  }
  if (a != null && b != null && a !== b) {
    const message = `${preferred} '${String(a)}' and its deprecated alias ${deprecated} '${String(b)}' disagree; send only ${preferred}`;
    throw deprecatedFieldInvalid(message, deprecated, preferred);
  }
  return (a ?? b ?? undefined) as string | undefined;
}

/**
 * Reads `database` / `collection` and their deprecated aliases `tenant_id` / `sub_tenant_id` (JSON body,
 * query string or multipart fields alike), adds the deprecation notices and echoes the scope in meta.
 */
export function readScope(ctx: RequestContext, input: ScopeInput, opts: { requireDatabase: boolean }): Scope {
  const database = pick(ctx, input, 'database', 'tenant_id');
  const collection = pick(ctx, input, 'collection', 'sub_tenant_id');
  if (!database && collection) {
    const usedDeprecated = input.sub_tenant_id != null;
    const message = usedDeprecated ? 'sub_tenant_id requires database (or tenant_id)' : 'collection requires database';
    throw usedDeprecated ? deprecatedFieldInvalid(message, 'sub_tenant_id', 'collection') : invalid(message);
  }
  if (!database && opts.requireDatabase) throw invalid('database is required');
  // A collection name that could not exist is 400 on every endpoint (lookups answered 404 for it), named as sent.
  if (collection) {
    const deprecated = input.collection == null && input.sub_tenant_id != null;
    try {
      assertCollectionName(collection, deprecated ? 'sub_tenant_id' : 'collection');
    } catch (error) {
      if (!deprecated) throw error;
      throw deprecatedFieldInvalid((error as Error).message, 'sub_tenant_id', 'collection');
    }
  }
  if (database) ctx.scope.database = database;
  if (collection) ctx.scope.collection = collection;
  return { database, collection };
}

export const databaseNotFound = (name: string) => notFound('DATABASE_NOT_FOUND', `database '${name}' was not found`);

/**
 * A scope given in a JSON body or the query string (DELETE routes take either): the query string's values win, and
 * only the ones it carries (a validated query object has every declared key, undefined when absent).
 */
export function scopeFromBodyAndQuery(body: object | undefined, query: object | undefined): ScopeInput {
  const sent = Object.fromEntries(Object.entries(query ?? {}).filter(([, v]) => v !== undefined));
  // One target per request: a field given in both places with different values is refused (a deletion must not act
  // on the query string's and ignore the body's).
  for (const [k, v] of Object.entries(sent)) {
    const other = (body as Record<string, unknown> | undefined)?.[k];
    if (other !== undefined && other !== v) throw invalid(`${k} is given twice with different values (query string ${JSON.stringify(v)}, body ${JSON.stringify(other)})`);
  }
  return { ...(body ?? {}), ...sent } as ScopeInput;
}
