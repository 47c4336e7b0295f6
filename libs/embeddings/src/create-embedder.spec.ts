import { CachedEmbedder } from './cached.embedder';
import { createEmbedder } from './create-embedder';
import { InMemoryEmbeddingCache } from './embedding-cache';
import { GloveSifEmbedder } from './glove-sif.embedder';
import { OpenAiCompatibleEmbedder } from './openai-compatible.embedder';
import { UniversalSentenceEncoderEmbedder } from './universal-sentence-encoder.embedder';

describe('createEmbedder', () => {
  it('defaults to the offline GloVe embedder', () => {
    expect(createEmbedder()).toBeInstanceOf(GloveSifEmbedder);
    expect(createEmbedder({ provider: 'glove', cacheDir: '/tmp/x' })).toBeInstanceOf(GloveSifEmbedder);
  });

  it('builds the USE embedder without loading the model', () => {
    const use = createEmbedder({ provider: 'use' });
    expect(use).toBeInstanceOf(UniversalSentenceEncoderEmbedder);
    expect(use.dimensions).toBe(512);
    expect(use.modelId).toBe('use-lite-512d-v1-en0.2.0');
  });

  it('builds the remote embedder from url and model, and picks it when only a url is given', () => {
    const remote = createEmbedder({ url: 'http://localhost:11434/v1', model: 'nomic-embed-text' });
    expect(remote).toBeInstanceOf(OpenAiCompatibleEmbedder);
    expect(remote.modelId).toBe('openai-compatible:nomic-embed-text:768d');
    expect(createEmbedder({ provider: 'openai', url: 'http://x', model: 'm', dimensions: 12 }).dimensions).toBe(12);
    expect(() => createEmbedder({ provider: 'openai', url: 'http://x' })).toThrow(/url and model/);
  });

  it('wraps the provider in a cache when given a store', () => {
    const cached = createEmbedder({ cache: new InMemoryEmbeddingCache() });
    expect(cached).toBeInstanceOf(CachedEmbedder);
    expect(cached.modelId).toBe('glove-sif-100d-v1');
  });

  it('rejects an unknown provider', () => {
    expect(() => createEmbedder({ provider: 'bert' as never })).toThrow(/unknown embedder provider/);
  });
});
