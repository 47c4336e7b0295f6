export { EmbeddingError, type Embedder } from './embedder.port';
export { emptyTextVector, normalizeInPlace, dot } from './unit-vector';
export { tokenizeEnglish } from './english-tokenizer';
export { TrigramHashingEmbedder, trigramHashVector } from './trigram-hashing';
export {
  DEFAULT_GLOVE_VOCABULARY_SIZE,
  defaultGloveCacheDir,
  gloveAssetPath,
  loadGloveAsset,
  prepareGloveAsset,
  type GloveAsset,
  type GloveAssetOptions,
} from './glove-asset';
export { GloveSifEmbedder, type GloveSifEmbedderOptions } from './glove-sif.embedder';
export { UniversalSentenceEncoderEmbedder, type UniversalSentenceEncoderEmbedderOptions } from './universal-sentence-encoder.embedder';
export {
  KNOWN_DIMENSIONS,
  OpenAiCompatibleEmbedder,
  embeddingsUrl,
  type OpenAiCompatibleEmbedderOptions,
} from './openai-compatible.embedder';
export { contentHash, InMemoryEmbeddingCache, type EmbeddingCacheStore } from './embedding-cache';
export { PostgresEmbeddingCache } from './postgres-embedding-cache';
export { CachedEmbedder } from './cached.embedder';
export { createEmbedder, type EmbedderConfig, type EmbedderProvider } from './create-embedder';
export { sameVectorSpace, VectorSpaces, type VectorSpace } from './vector-spaces';
