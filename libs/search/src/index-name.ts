import { SearchIndexError } from './search-index.port';

/**
 * Physical index names become LanceDB table directories and Elasticsearch index names,
 * so they are restricted to what is safe for both: lowercase letters, digits and underscores,
 * not starting with an underscore (Elasticsearch reserves leading '_').
 */
const INDEX_NAME = /^[a-z0-9][a-z0-9_]{0,199}$/;

export function assertValidIndexName(indexName: string): void {
  if (typeof indexName !== 'string' || !INDEX_NAME.test(indexName)) {
    throw new SearchIndexError(
      'invalid_argument',
      `invalid search index name ${JSON.stringify(indexName)}: use lowercase letters, digits and underscores`,
    );
  }
}
