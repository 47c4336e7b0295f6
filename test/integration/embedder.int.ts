import { Pool } from 'pg';
import { CachedEmbedder } from '@crs/embeddings/cached.embedder';
import { createEmbedder } from '@crs/embeddings/create-embedder';
import { InMemoryEmbeddingCache } from '@crs/embeddings/embedding-cache';
import { GloveSifEmbedder } from '@crs/embeddings/glove-sif.embedder';
import { OpenAiCompatibleEmbedder } from '@crs/embeddings/openai-compatible.embedder';
import { PostgresEmbeddingCache } from '@crs/embeddings/postgres-embedding-cache';
import { UniversalSentenceEncoderEmbedder } from '@crs/embeddings/universal-sentence-encoder.embedder';
import { createTestDatabase } from '../support/test-database';
import { describeEmbedderContract } from './embedder.contract';
import { FakeOpenAiServer } from './embedder.fake-openai-server';

const server = new FakeOpenAiServer(64);
let pool: Pool;

beforeAll(async () => {
  await server.start();
  pool = new Pool({ connectionString: await createTestDatabase('embedder_contract'), max: 4 });
});

afterAll(async () => {
  await server.stop();
  await pool?.end();
});

const remote = () =>
  new OpenAiCompatibleEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed', dimensions: server.dimensions, batchSize: 16, retryBaseDelayMs: 5 });

describeEmbedderContract('glove-sif (offline default)', { create: () => new GloveSifEmbedder() });

describeEmbedderContract('glove-sif via createEmbedder({})', { create: () => createEmbedder({}) });

// Always runs: the packages are ordinary dependencies and load under jest, so a failure to load them is a broken
// install and fails this suite rather than skipping it.
// The WebAssembly backend's float sums may differ in the last bits between batch compositions.
describeEmbedderContract('universal-sentence-encoder (offline alternative)', {
  create: () => new UniversalSentenceEncoderEmbedder(),
  tolerance: 1e-5,
  timeoutMs: 60_000,
});

describeEmbedderContract('openai-compatible (fake server)', { create: remote });

describeEmbedderContract('cached glove-sif (in memory)', {
  create: () => new CachedEmbedder(new GloveSifEmbedder(), new InMemoryEmbeddingCache()),
});

describeEmbedderContract('cached openai-compatible (postgres)', {
  create: async () => {
    const store = new PostgresEmbeddingCache(pool);
    await store.init();
    return new CachedEmbedder(remote(), store);
  },
});
