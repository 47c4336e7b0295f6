import { ElasticsearchSearchIndex } from './elasticsearch-search-index';
import { LanceDbSearchIndex, type LanceDbSearchIndexOptions } from './lancedb-search-index';
import type { SearchIndex } from './search-index.port';

export interface SearchIndexConfig {
  /** Set in production (ELASTICSEARCH_URL): Elasticsearch. Unset: the embedded LanceDB engine. */
  elasticsearchUrl?: string;
  /** Where the embedded engine keeps its tables (under the data directory). */
  lanceDir: string;
  /** Tuning for the embedded engine; ignored with Elasticsearch. */
  lance?: Omit<LanceDbSearchIndexOptions, 'dir'>;
}

export function createSearchIndex(config: SearchIndexConfig): SearchIndex {
  if (config.elasticsearchUrl) {
    const url = new URL(config.elasticsearchUrl);
    // Credentials in the URL (http://user:pass@host:9200) become basic auth rather than part of the node URL.
    const auth = url.username ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) } : undefined;
    url.username = '';
    url.password = '';
    return new ElasticsearchSearchIndex({ node: url.toString(), auth });
  }
  return new LanceDbSearchIndex({ ...config.lance, dir: config.lanceDir });
}
