import { type ChunkDoc, type Scalar, SearchIndexError } from './search-index.port';

/**
 * Metadata of arbitrary keys is made filterable without schema changes by indexing one token
 * per entry, `<scope>:<key>=<JSON value>`: `m:` for metadata, `a:` for additional metadata.
 * JSON keeps types apart (1 vs "1" vs true vs null). Both adapters index the same tokens,
 * so equality / IN filters mean exactly the same on either engine.
 */
export type MetadataScope = 'm' | 'a';

/** Keys an engine filter may name: quoted inside tokens either way, but kept to a plain shape (defence in depth). */
const METADATA_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

export function assertValidMetadataKey(key: string): void {
  if (!METADATA_KEY.test(key)) {
    throw new SearchIndexError(
      'invalid_argument',
      `invalid metadata key ${JSON.stringify(key)}: use letters, digits, '_', '.', '-' (starting with a letter or '_')`,
    );
  }
}

/**
 * The metadata keys the service indexes a token for (libs/search chunk-docs), and so the only ones its queries can
 * filter on: identifiers of up to 64 characters. Items may hold other keys (stored and returned as sent); a query
 * filter on one is refused with a clear error rather than pushed down to match nothing (a key with '.' or '-', which
 * the service never indexes, would quietly match nothing).
 */
const INDEXED_METADATA_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export function isIndexedMetadataKey(key: string): boolean {
  return INDEXED_METADATA_KEY.test(key);
}

export const METADATA_KEY_RULE = "letters, digits and '_', starting with a letter or '_', at most 64 characters";

export function metadataToken(scope: MetadataScope, key: string, value: Scalar): string {
  return `${scope}:${key}=${JSON.stringify(value)}`;
}

/** Every token a stored chunk carries. Keys are not validated here: they only ever appear inside tokens. */
export function chunkFilterTokens(doc: Pick<ChunkDoc, 'metadata' | 'additionalMetadata'>): string[] {
  const tokens: string[] = [];
  for (const [key, value] of Object.entries(doc.metadata)) tokens.push(metadataToken('m', key, value));
  for (const [key, value] of Object.entries(doc.additionalMetadata)) tokens.push(metadataToken('a', key, value));
  return tokens;
}

/**
 * One entry per filtered key: the tokens of which at least one must be present
 * (a single value is a one-token list; an empty list matches nothing).
 */
export function filterTokenGroups(
  scope: MetadataScope,
  filter: Record<string, Scalar | Scalar[]> | undefined,
): string[][] {
  if (!filter) return [];
  return Object.entries(filter).map(([key, wanted]) => {
    assertValidMetadataKey(key);
    const values = Array.isArray(wanted) ? wanted : [wanted];
    return values.map((value) => metadataToken(scope, key, value));
  });
}
