export * from './search-index.port';
export { assertValidIndexName } from './index-name';
export { LanceDbSearchIndex, type LanceDbSearchIndexOptions } from './lancedb-search-index';
export { ElasticsearchSearchIndex, type ElasticsearchSearchIndexOptions } from './elasticsearch-search-index';
export { createSearchIndex, type SearchIndexConfig } from './create-search-index';
