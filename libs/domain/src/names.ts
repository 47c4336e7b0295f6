import { invalid } from './errors';

/**
 * Database names: 1 to 63 characters, letters, digits, `_` and `-`, starting with a letter or digit.
 * Collection names: 1 to 128 characters, letters, digits and `_ - . @ :`, starting with a letter or digit
 * (collections are often per-user, so emails and ids must fit). Names are case-sensitive.
 */
export const DATABASE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
export const COLLECTION_NAME = /^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}$/;
export const DEFAULT_COLLECTION = 'default';

export function assertDatabaseName(name: unknown, field = 'database'): string {
  if (typeof name !== 'string' || !DATABASE_NAME.test(name)) {
    throw invalid(`${field} must be 1-63 characters: letters, digits, '_' or '-', starting with a letter or digit`);
  }
  return name;
}

export function assertCollectionName(name: unknown, field = 'collection'): string {
  if (typeof name !== 'string' || !COLLECTION_NAME.test(name)) {
    throw invalid(`${field} must be 1-128 characters: letters, digits, '_', '-', '.', '@' or ':', starting with a letter or digit`);
  }
  return name;
}
