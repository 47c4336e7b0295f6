import { ElasticsearchSearchIndex } from '../../libs/search/src';
import { searchIndexContract } from './search-index.contract';

const url = process.env.ELASTICSEARCH_URL;

if (url) {
  // refresh: true makes each write searchable at once without waiting for the refresh interval (tests only).
  searchIndexContract('elasticsearch', async () => ({ index: new ElasticsearchSearchIndex({ node: url, refresh: true }) }));
} else {
  console.warn('SKIPPED: ELASTICSEARCH_URL is not set; the Elasticsearch SearchIndex contract suite did not run.');
  describe.skip('SearchIndex contract (elasticsearch): SKIPPED, ELASTICSEARCH_URL is not set', () => {
    it('needs a reachable Elasticsearch', () => undefined);
  });
}
